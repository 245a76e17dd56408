/**
 * src/http/answer-body.ts: which bodies are given to Bun as a stream (past 14 KiB of UTF-8), that a streamed
 * body is the same bytes, and how a handler's object becomes an answer. The socket-level side (what a caller
 * of a real server receives) is test/foundation/large-answers.test.ts.
 */
import { expect, test } from "bun:test";
import { answerBody, isLargeBody, jsonAnswer, jsonResponse, LARGE_BODY } from "../../src/http/answer-body";
import { testApp } from "../support/app";

test("a body is large past LARGE_BODY bytes of UTF-8, counted in bytes, not characters", () => {
  expect(isLargeBody("a".repeat(LARGE_BODY))).toBe(false);
  expect(isLargeBody("a".repeat(LARGE_BODY + 1))).toBe(true);
  // Two bytes a character: large at half the characters.
  expect(isLargeBody("é".repeat(LARGE_BODY / 2))).toBe(false);
  expect(isLargeBody("é".repeat(LARGE_BODY / 2 + 1))).toBe(true);
  expect(isLargeBody(new Uint8Array(LARGE_BODY))).toBe(false);
  expect(isLargeBody(new Uint8Array(LARGE_BODY + 1))).toBe(true);
});

test("a small body is given as it is; a large one as a stream of the same bytes", async () => {
  expect(answerBody("small")).toBe("small");
  const text = `{"a":"${"é€".repeat(LARGE_BODY)}"}`;
  const streamed = answerBody(text);
  expect(streamed).toBeInstanceOf(ReadableStream);
  expect(await new Response(streamed).text()).toBe(text);
  const bytes = new TextEncoder().encode(text);
  expect(new Uint8Array(await new Response(answerBody(bytes)).arrayBuffer())).toEqual(bytes);
});

test("jsonResponse answers as Response.json does: its Content-Type unless one is given, in any case", async () => {
  const value = { list: Array.from({ length: 2000 }, (_, i) => ({ i })) };
  const large = jsonResponse(value, { status: 201, headers: { "x-request-id": "r1" } });
  expect(large.status).toBe(201);
  expect(large.headers.get("content-type")).toBe(Response.json(value).headers.get("content-type")!);
  expect(large.headers.get("x-request-id")).toBe("r1");
  expect(await large.json()).toEqual(value);
  const own = jsonResponse({ a: 1 }, { headers: { "Content-Type": "application/vnd.api+json" } });
  expect(own.headers.get("content-type")).toBe("application/vnd.api+json");
});

test("jsonAnswer maps objects and arrays with the status set, leaving the headers set for Elysia to merge once", async () => {
  const answer = jsonAnswer([{ a: 1 }], { status: 202, headers: { "x-request-id": "r2", "retry-after": "5" } })!;
  expect(answer.status).toBe(202);
  expect(answer.headers.get("retry-after")).toBeNull();
  expect(answer.headers.get("content-type")).toStartWith("application/json");
  expect(await answer.json()).toEqual([{ a: 1 }]);
  expect(jsonAnswer({ a: 1 }, { headers: {} })!.status).toBe(200);
  // A Content-Type the handler set, in any case, is Elysia's to merge: none of the answer's own beside it.
  expect(jsonAnswer({ a: 1 }, { headers: { "Content-Type": "application/vnd.api+json" } })!.headers.get("content-type")).toBeNull();
  expect(jsonAnswer(new Response("x"), { headers: {} })).toBeUndefined();
  expect(jsonAnswer("text", { headers: {} })).toBeUndefined();
  expect(jsonAnswer(null, { headers: {} })).toBeUndefined();
  expect(jsonAnswer(new (class Wrapped {})(), { headers: {} })).toBeUndefined();
  expect(jsonAnswer({ a: 1 }, { headers: {}, cookie: { session: {} } })).toBeUndefined();
  expect(jsonAnswer({ a: 1 }, { headers: {}, status: "Created" })).toBeUndefined();
});

test("through the app, an answer's headers come once: one session cookie, one request id, one Content-Type", async () => {
  const app = await testApp();
  const setup = await app.app.handle(
    new Request("http://localhost/api/auth/setup", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "owner@example.com", password: "owner password" }),
    }),
  );
  expect(setup.status).toBe(201);
  expect(setup.headers.getSetCookie()).toHaveLength(1);
  expect(setup.headers.get("x-request-id")).not.toContain(",");
  expect(setup.headers.get("content-type")).toBe("application/json;charset=utf-8");
});
