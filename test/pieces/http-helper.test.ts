/**
 * The pieces' shared HTTP call (src/pieces-sdk/http.ts) against a loopback node:http server: JSON and text
 * answers, refusals that name the status and the service's reason or a body excerpt, a bounded retry of a
 * GET that met a 502 or 503 and none of a POST, and the SSRF guard still refusing loopback when not allowed.
 * The retries wait through an injected `wait` that records the delays and returns at once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { baseUrlOf, bodyExcerpt, commonReason, connectionCheck, HttpStatusError, httpFetch, httpRequest } from "../../src/pieces-sdk";
import { createGuardedFetch } from "../../src/net/guarded-fetch";

const allowed = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"] });

/** What the server saw, one entry per request: method, path, content-type, body. */
let seen: Array<{ method: string; path: string; contentType?: string; body: string }> = [];
/** Statuses /flaky answers, one per request, then 200. */
let flaky: number[] = [];

let server: Server;
let base: string;

async function read(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const path = request.url ?? "/";
    const body = await read(request);
    seen.push({ method: request.method ?? "", path, contentType: request.headers["content-type"], body });
    const send = (status: number, text: string, type = "application/json", headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": type, ...headers });
      response.end(text);
    };
    if (path === "/json") return send(200, JSON.stringify({ ok: true, echo: body ? JSON.parse(body) : null }));
    if (path === "/text") return send(200, "plain words", "text/plain");
    if (path === "/empty") return send(204, "", "text/plain");
    if (path === "/not-json") return send(200, "<html>hello</html>", "text/html");
    if (path === "/refused") return send(403, JSON.stringify({ message: "token lacks the repo scope" }));
    if (path === "/html-error") return send(500, `<html>\n  <body>${"Internal failure. ".repeat(30)}</body>\n</html>`, "text/html");
    if (path === "/flaky") {
      const status = flaky.shift();
      if (status) return send(status, `upstream down (${status})`, "text/plain", status === 503 ? { "retry-after": "1" } : {});
      return send(200, JSON.stringify({ attempt: seen.filter((s) => s.path === "/flaky").length }));
    }
    send(404, "no such thing", "text/plain");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  seen = [];
  flaky = [];
});

/** A wait that records the delays asked for and does not wait. */
function recordingWait() {
  const delays: number[] = [];
  return { delays, wait: async (ms: number) => void delays.push(ms) };
}

describe("reading answers", () => {
  test("JSON is parsed, and a json body is sent as JSON with its content type", async () => {
    const answer = await httpRequest(allowed, `${base}/json`, { service: "Echo", method: "POST", json: { a: 1 } });
    expect(answer).toEqual({ ok: true, echo: { a: 1 } });
    expect(seen[0]).toMatchObject({ method: "POST", contentType: "application/json", body: '{"a":1}' });
  });

  test("text stays text in auto mode, an empty answer is null, and read: text never parses", async () => {
    expect(await httpRequest(allowed, `${base}/text`, { service: "Echo" })).toBe("plain words");
    expect(await httpRequest(allowed, `${base}/empty`, { service: "Echo" })).toBeNull();
    expect(await httpRequest(allowed, `${base}/json`, { service: "Echo", read: "text" })).toBe('{"ok":true,"echo":null}');
  });

  test("read: json refuses an answer that is not JSON, quoting it", async () => {
    await expect(httpRequest(allowed, `${base}/not-json`, { service: "the LLM server", read: "json" })).rejects.toThrow(
      "the LLM server answered 200 with something that is not JSON: <html>hello</html>",
    );
  });

  test("httpFetch answers the response unread, for a piece that streams it", async () => {
    const response = await httpFetch(allowed, `${base}/text`, { service: "Echo" });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("plain words");
  });
});

describe("refusals", () => {
  test("a refusal names the service, the status, the request and the service's own reason", async () => {
    const refusal = (await httpRequest(allowed, `${base}/refused`, {
      service: "GitHub",
      label: "GET /refused",
      reason: (body) => (body as { message?: string }).message,
    }).catch((error) => error)) as HttpStatusError;
    expect(refusal).toBeInstanceOf(HttpStatusError);
    expect(refusal.message).toBe("GitHub answered 403 to GET /refused: token lacks the repo scope");
    expect(refusal.status).toBe(403);
    expect(refusal.body).toEqual({ message: "token lacks the repo scope" });
  });

  test("without a reason of the service's the message quotes a short excerpt of the body, on one line", async () => {
    const refusal = (await httpRequest(allowed, `${base}/html-error`, { service: "Home Assistant" }).catch((error) => error)) as HttpStatusError;
    expect(refusal.message.startsWith("Home Assistant answered 500: <html> <body>Internal failure. Internal failure.")).toBe(true);
    expect(refusal.message).not.toContain("\n");
    expect(refusal.reason.length).toBe(201);
    expect(refusal.reason.endsWith("…")).toBe(true);
    expect(bodyExcerpt("  a\n\n b  ")).toBe("a b");
  });

  test("explain replaces the message of a refusal the piece can explain, and leaves the others", async () => {
    const explain = (r: HttpStatusError) => (r.status === 403 ? "check the connection's token" : undefined);
    await expect(httpRequest(allowed, `${base}/refused`, { service: "X", explain })).rejects.toThrow(/^check the connection's token$/);
    await expect(httpRequest(allowed, `${base}/missing`, { service: "X", explain })).rejects.toThrow("X answered 404: no such thing");
  });
});

describe("retries", () => {
  test("a GET that meets a 502 then a 503 is tried again, with the backoff doubled and Retry-After honoured", async () => {
    flaky = [502, 503];
    const { delays, wait } = recordingWait();
    const answer = await httpRequest(allowed, `${base}/flaky`, { service: "Flaky", retry: { backoffMs: 100, wait } });
    expect(answer).toEqual({ attempt: 3 });
    expect(delays).toEqual([100, 1000]);
  });

  test("the retries are bounded: the last refusal is thrown, saying how many attempts were made", async () => {
    flaky = [502, 502, 502, 502];
    const { delays, wait } = recordingWait();
    await expect(httpRequest(allowed, `${base}/flaky`, { service: "Flaky", retry: { attempts: 3, backoffMs: 10, wait } })).rejects.toThrow(
      "Flaky answered 502: upstream down (502) (after 3 attempts)",
    );
    expect(seen.length).toBe(3);
    expect(delays).toEqual([10, 20]);
  });

  test("a POST is never retried", async () => {
    flaky = [503];
    const { delays, wait } = recordingWait();
    await expect(httpRequest(allowed, `${base}/flaky`, { service: "Flaky", method: "POST", json: {}, retry: { wait } })).rejects.toThrow(
      "Flaky answered 503: upstream down (503)",
    );
    expect(seen.map((s) => s.method)).toEqual(["POST"]);
    expect(delays).toEqual([]);
  });

  test("a 4xx and a 500 are not retried, nor anything with retry: false", async () => {
    const { delays, wait } = recordingWait();
    await expect(httpRequest(allowed, `${base}/missing`, { service: "X", retry: { wait } })).rejects.toThrow("X answered 404");
    await expect(httpRequest(allowed, `${base}/html-error`, { service: "X", retry: { wait } })).rejects.toThrow("X answered 500");
    flaky = [502];
    await expect(httpRequest(allowed, `${base}/flaky`, { service: "X", retry: false })).rejects.toThrow("X answered 502");
    expect(seen.length).toBe(3);
    expect(delays).toEqual([]);
  });

  test("a step stopped during the wait is not tried again", async () => {
    flaky = [502];
    const stop = new AbortController();
    const wait = async () => {
      stop.abort(new Error("the run was cancelled"));
      throw stop.signal.reason;
    };
    await expect(httpRequest(allowed, `${base}/flaky`, { service: "Flaky", signal: stop.signal, retry: { wait } })).rejects.toThrow(
      "Flaky answered 502 and the step stopped before trying again: the run was cancelled",
    );
    expect(seen.length).toBe(1);
  });
});

describe("the SSRF guard", () => {
  test("a guarded fetch without an allowed range still refuses loopback, before any request, and is not retried", async () => {
    const { delays, wait } = recordingWait();
    const refusal = (await httpRequest(createGuardedFetch(), `${base}/json`, { service: "Echo", retry: { wait } }).catch((error) => error)) as Error;
    expect(refusal.message).toMatch(/^could not reach Echo at http:\/\/127\.0\.0\.1:\d+: refused to connect to 127\.0\.0\.1/);
    expect(refusal.message).toContain("WEFT_ALLOW_CIDRS");
    expect((refusal.cause as { code?: string }).code).toBe("SSRF_BLOCKED");
    expect(seen).toEqual([]);
    expect(delays).toEqual([]);
  });

  test("a metadata address is refused even with every private range allowed", async () => {
    const open = createGuardedFetch({ allowCidrs: ["0.0.0.0/0"] });
    await expect(httpRequest(open, "http://169.254.169.254/latest/meta-data/", { service: "Cloud" })).rejects.toThrow("cloud metadata address");
  });
});

describe("the other shared parts", () => {
  test("commonReason reads the error fields services use, the most specific first", () => {
    expect(commonReason({ ok: false, error_code: 400, description: "Bad Request: chat not found" })).toBe("Bad Request: chat not found");
    expect(commonReason({ error: "Unauthorized", errorCode: 401, errorDescription: "you need to provide a valid access token" })).toBe(
      "you need to provide a valid access token",
    );
    expect(commonReason({ error: { message: "Incorrect API key provided", type: "invalid_request_error" } })).toBe("Incorrect API key provided");
    expect(commonReason({ code: 40301, error: "forbidden" })).toBe("forbidden");
    expect(commonReason({ message: "Not Found", documentation_url: "https://docs.github.com" })).toBe("Not Found");
    expect([commonReason("plain text"), commonReason(null), commonReason({ status: "down" })]).toEqual([undefined, undefined, undefined]);
  });

  test("baseUrlOf trims a typed URL and its trailing slashes, and refuses what is not http(s)", () => {
    expect(baseUrlOf("  http://192.168.1.20:8123///  ", "the Home Assistant URL", "http://ha.lan:8123")).toBe("http://192.168.1.20:8123");
    expect(() => baseUrlOf("ha.lan", "the Home Assistant URL", "http://ha.lan:8123")).toThrow(
      'the Home Assistant URL "ha.lan" is not a URL; use e.g. http://ha.lan:8123',
    );
    expect(() => baseUrlOf("ftp://ha.lan", "server_url", "https://ntfy.sh")).toThrow("server_url must start with http:// or https://; got ftp:");
  });

  test("connectionCheck answers the probe's message, or the message of what it threw", async () => {
    const ctx = { auth: { kind: "custom" as const, values: {} }, fetch: allowed, signal: new AbortController().signal };
    expect(await connectionCheck(async () => "connected as ada")(ctx)).toEqual({ ok: true, message: "connected as ada" });
    const failing = connectionCheck(() => httpRequest(allowed, `${base}/refused`, { service: "GitHub" }).then(() => "never"));
    expect(await failing(ctx)).toEqual({ ok: false, message: "GitHub answered 403: token lacks the repo scope" });
  });
});
