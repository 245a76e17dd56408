/** The webhook body is parsed strictly by its Content-Type and kept as data. */
import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/http/errors";
import { mediaType, parseBody, queryOf, readBody } from "../../src/core/triggers/webhook-request";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("webhook body parsing", () => {
  const cases: Array<[string, string | null, string, unknown]> = [
    ["JSON", "application/json", '{"a":1,"b":[true,null]}', { a: 1, b: [true, null] }],
    ["JSON with a suffix type", "application/vnd.api+json; charset=utf-8", '{"x":"y"}', { x: "y" }],
    ["form", "application/x-www-form-urlencoded", "name=Ada&tag=a&tag=b&empty=", { name: "Ada", tag: ["a", "b"], empty: "" }],
    ["text", "text/plain; charset=utf-8", "hello {{ run.id }}", "hello {{ run.id }}"],
    ["xml as text", "application/xml", "<a>1</a>", "<a>1</a>"],
    ["binary", "application/octet-stream", "\u0000\u0001\u0002", { encoding: "base64", contentType: "application/octet-stream", size: 3, data: "AAEC" }],
    ["unknown type as binary", "image/png", "PNG", { encoding: "base64", contentType: "image/png", size: 3, data: "UE5H" }],
    ["no content type as binary", null, "raw", { encoding: "base64", contentType: "application/octet-stream", size: 3, data: "cmF3" }],
    ["empty body", "application/json", "", {}],
  ];
  for (const [name, type, raw, expected] of cases) {
    test(name, async () => {
      expect(await parseBody(bytes(raw), type)).toEqual(expected);
    });
  }

  test("multipart fields and files", async () => {
    const form = new FormData();
    form.append("name", "Ada");
    form.append("file", new Blob(["hi"], { type: "text/plain" }), "a.txt");
    const request = new Request("http://localhost/", { method: "POST", body: form });
    const type = request.headers.get("content-type");
    const body = (await parseBody(new Uint8Array(await request.arrayBuffer()), type)) as any;
    expect(body.name).toBe("Ada");
    expect(body.file).toEqual({ filename: "a.txt", contentType: "text/plain;charset=utf-8", size: 2, encoding: "base64", data: "aGk=" });
  });

  test("invalid JSON under a JSON type is a 400 naming the alternatives", async () => {
    const error: any = await parseBody(bytes("{nope"), "application/problem+json").catch((e: any) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error.status).toBe(400);
    expect(error.message).toContain("text/plain");
  });

  test("prototype keys in form fields are refused", async () => {
    const error: any = await parseBody(bytes("__proto__=x"), "application/x-www-form-urlencoded").catch((e: any) => e);
    expect(error.status).toBe(400);
  });

  test("a body over the limit is 413, with or without Content-Length", async () => {
    const declared = new Request("http://localhost/", { method: "POST", body: "x".repeat(2000), headers: { "content-length": "2000" } });
    expect((await readBody(declared, 1024).catch((e: any) => e)).status).toBe(413);
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(bytes("y".repeat(3000)));
        c.close();
      },
    });
    const chunked = new Request("http://localhost/", { method: "POST", body: stream });
    expect((await readBody(chunked, 1024).catch((e: any) => e)).status).toBe(413);
  });

  test("query keeps repeated keys; media type drops parameters", () => {
    expect(queryOf("http://h/webhook/t?a=1&a=2&b=x")).toEqual({ a: ["1", "2"], b: "x" });
    expect(queryOf("http://h/webhook/t")).toEqual({});
    expect(mediaType("Application/JSON; charset=utf-8")).toBe("application/json");
  });
});
