/**
 * The body of an answer, in the form Bun sends in the fewest pieces.
 *
 * Bun (1.4.5) assembles an answer in a 16 KiB buffer per socket (uWS's cork buffer) and sends it with one
 * `sendmsg`. An answer made after an `await` — every API answer that read the store, a webhook's reply after
 * its run — whose status line, headers and body do not fit that buffer is written without it: the status
 * line, each header's name, ": ", value and CRLF, and the body each in a `send()` of their own, ~19 for a
 * run-list page (oven-sh/bun#41341, open). Each is a TCP segment that wakes the client; a loopback server
 * answering 20 KiB that way answered ~6,500 a second where the same answer streamed answered ~36,000
 * (docs/scaling.md, "Large answers"). A body given as a stream leaves as one `sendmsg` (head and the body's
 * one chunk) and the chunked encoding's end: two sends, without Content-Length (Transfer-Encoding: chunked).
 *
 * So a body over LARGE_BODY bytes is given to Bun as a stream of one chunk; a smaller one as it is, which
 * keeps Content-Length and its one send.
 */

/** Past this many bytes of body, head and body together may not fit Bun's 16 KiB buffer (a head is ~0.2–2 KiB). */
export const LARGE_BODY = 14 * 1024;

/** Whether `body` is sent as a stream (more than LARGE_BODY bytes). */
export function isLargeBody(body: string | Uint8Array): boolean {
  if (typeof body !== "string") return body.byteLength > LARGE_BODY;
  // A UTF-16 code unit is at most 3 bytes in UTF-8: the exact count only for texts that could pass.
  return body.length > LARGE_BODY / 3 && (body.length > LARGE_BODY || Buffer.byteLength(body) > LARGE_BODY);
}

/** Bun's own kind of stream (`type: "direct"`): it takes the text as it is, with no copy into bytes first. */
const DirectStream = ReadableStream as unknown as new (source: Bun.DirectUnderlyingSource) => ReadableStream<Uint8Array>;

/** `body` as Bun sends it in the fewest pieces: itself when small, else a stream of one chunk (see above). */
export function answerBody(body: string | Uint8Array<ArrayBuffer>): string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> {
  if (!isLargeBody(body)) return body;
  return new DirectStream({
    type: "direct",
    pull(controller) {
      controller.write(body);
      controller.close();
    },
  });
}

/** `init`'s headers with `contentType` unless they name a Content-Type in any case. */
function withContentType(headers: HeadersInit | undefined, contentType: string): Headers {
  const out = new Headers(headers);
  if (!out.has("content-type")) out.set("content-type", contentType);
  return out;
}

/** `value` as JSON text, as Response.json answers it (its Content-Type unless `init` names one), large ones streamed. */
export function jsonResponse(value: unknown, init: ResponseInit = {}): Response {
  return new Response(answerBody(JSON.stringify(value)), { ...init, headers: withContentType(init.headers, "application/json;charset=utf-8") });
}

/**
 * A handler's object or array as the app answers it (as Elysia would: Response.json's way): serialised here
 * rather than by Elysia, so that a large one leaves as a stream. The answer carries only its status and, unless
 * the handler set one, the Content-Type: Elysia merges the headers the handler set into it (once: a Set-Cookie
 * put here too would be sent twice). Anything else (a Response, text, a status wrapper, cookies set through
 * Elysia) is left to Elysia: undefined.
 */
export function jsonAnswer(value: unknown, set: { status?: unknown; headers: Record<string, unknown>; cookie?: unknown }): Response | undefined {
  const kind = (value as object | null | undefined)?.constructor;
  if ((kind !== Object && kind !== Array) || set.cookie || (set.status !== undefined && typeof set.status !== "number")) return undefined;
  const typed = Object.keys(set.headers).some((name) => name.toLowerCase() === "content-type");
  return new Response(answerBody(JSON.stringify(value)), {
    status: (set.status as number | undefined) ?? 200,
    headers: typed ? undefined : JSON_TYPE,
  });
}

const JSON_TYPE = { "content-type": "application/json;charset=utf-8" };
