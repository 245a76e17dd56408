/**
 * GET /api/runs/{id}/stream (docs/engine.md "Runs API decisions"): `run`, `step` and `end` events with ids; a finished
 * run streams its history then `end`; Last-Event-ID resumes without gaps or repeats.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ROOT_TOKEN, type TestApp } from "../support/app";
import { startServer, type ServerHandle } from "../support/server";
import { parseSse, type SseEvent } from "../support/sse";
import { chain, createWorkflow, definition, engineApp, runAndWait, stopEngines, template, testPiece } from "../engine/support";

let t: TestApp;
afterAll(stopEngines);

beforeAll(async () => {
  t = await engineApp();
  t.deps.pieces.register(
    testPiece("wait", [{ id: "ms", sideEffects: "external", run: ({ config }) => Bun.sleep(Number(config.ms)).then(() => ({ waited: config.ms })) }]),
  );
});

/** Reads the whole stream (it closes after `end`). */
async function stream(runId: string, lastEventId?: number): Promise<{ status: number; type: string | null; events: SseEvent[] }> {
  const headers: Record<string, string> = { authorization: `Bearer ${ROOT_TOKEN}` };
  if (lastEventId !== undefined) headers["last-event-id"] = String(lastEventId);
  const res = await t.app.handle(new Request(`http://localhost/api/runs/${runId}/stream`, { headers }));
  const text = await res.text();
  return { status: res.status, type: res.headers.get("content-type"), events: res.status === 200 ? parseSse(text) : [] };
}

describe("run event stream", () => {
  test("a finished run streams its step history, the run, then end; ids increase", async () => {
    const id = await createWorkflow(t, definition(chain(template("a", "1"), template("b", "2"))));
    const run = await runAndWait(t, id);
    const { status, type, events } = await stream(run.id);
    expect(status).toBe(200);
    expect(type).toContain("text/event-stream");
    expect(events.map((e) => e.event)).toEqual(["step", "step", "run", "end"]);
    expect(events.map((e) => e.data.nodeId ?? e.data.status)).toEqual(["a", "b", "completed", "completed"]);
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(ids.length);
    expect(events[3]!.data.id).toBe(run.id);
  });

  test("a live run streams status changes and steps as they happen, then end (in-process pieces run on the main thread: no running row)", async () => {
    const id = await createWorkflow(
      t,
      definition(chain({ name: "pause1", type: "PIECE", pieceId: "wait", actionId: "ms", config: { ms: 150 } }, template("after", "done"))),
    );
    const started = await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: {} });
    const { events } = await stream(started.body.data.id);
    const kinds = events.map((e) => `${e.event}:${e.data.nodeId ?? e.data.status}:${e.event === "step" ? e.data.status : ""}`);
    expect(kinds[kinds.length - 1]).toBe("end:completed:");
    expect(kinds).toContain("step:pause1:completed");
    expect(kinds).toContain("step:after:completed");
    expect(kinds.indexOf("step:pause1:completed")).toBeLessThan(kinds.indexOf("step:after:completed"));
    expect(events.some((e) => e.event === "run" && e.data.status === "running")).toBe(true);
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
  });

  test("Last-Event-ID resumes after the last event received: nothing missed, nothing repeated", async () => {
    const id = await createWorkflow(t, definition(chain(template("a", "1"), template("b", "2"), template("c", "3"))));
    const run = await runAndWait(t, id);
    const all = (await stream(run.id)).events;
    const firstStep = all.find((e) => e.event === "step")!;
    const resumed = (await stream(run.id, firstStep.id)).events;
    expect(resumed.map((e) => e.data.nodeId ?? e.event)).toEqual(["b", "c", "run", "end"]);
    expect(resumed.every((e) => e.id > firstStep.id)).toBe(true);
    const end = all[all.length - 1]!;
    const afterRun = (await stream(run.id, end.id - 1)).events;
    expect(afterRun.map((e) => e.event)).toEqual(["end"]);
  });

  test("another workspace's run is 404; reading needs run:read", async () => {
    const run = await runAndWait(t, await createWorkflow(t, definition(template("a", "1"))));
    const other = await t.otherWorkspace();
    const res = await t.app.handle(new Request(`http://localhost/api/runs/${run.id}/stream`, { headers: { authorization: `Bearer ${other.token}` } }));
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("NOT_FOUND");
  });
});

describe('an open stream and its credential (docs/teams.md, "Sessions")', () => {
  /** Opens the stream of a run that waits a long time, with `headers`; answers its reader. */
  async function openLongStream(headers: Record<string, string>) {
    const id = await createWorkflow(t, definition({ name: "long", type: "PIECE", pieceId: "wait", actionId: "ms", config: { ms: 120_000 } }));
    const started = await t.req("POST", `/api/workflows/${id}/run?environment=test`, { body: {} });
    const runId = started.body.data.id as string;
    const res = await t.app.handle(new Request(`http://localhost/api/runs/${runId}/stream`, { headers }));
    expect(res.status).toBe(200);
    return { runId, reader: res.body!.getReader() };
  }

  /** Reads until the stream closes; answers the events it carried. */
  async function readToClose(reader: ReadableStreamDefaultReader<Uint8Array>) {
    const decoder = new TextDecoder();
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return parseSse(text);
      text += decoder.decode(value);
    }
  }

  test("logging the session out ends its open stream, before the run ends; reopening it answers 401", async () => {
    const setup = await t.req("POST", "/api/auth/setup", { token: null, body: { email: "streamer@example.com", password: "streamer password" } });
    expect(setup.status).toBe(201);
    const session = { cookie: setup.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": setup.body.data.csrfToken as string };
    const { runId, reader } = await openLongStream({ cookie: session.cookie });
    const logout = await t.req("POST", "/api/auth/logout", { token: null, headers: session });
    expect(logout.status).toBe(200);
    const events = await readToClose(reader);
    expect(events.some((e) => e.event === "end")).toBe(false);
    const run = await t.req("GET", `/api/runs/${runId}`);
    expect(run.body.data.status).toBe("running");
    const again = await t.app.handle(new Request(`http://localhost/api/runs/${runId}/stream`, { headers: { cookie: session.cookie } }));
    expect(again.status).toBe(401);
    expect((await t.req("POST", `/api/runs/${runId}/cancel`)).status).toBe(200);
  }, 30_000);

  test("deactivating the member ends the open stream of their session", async () => {
    const invitation = await t.req("POST", "/api/invitations", { body: { email: "watcher@example.com", role: "viewer" } });
    expect(invitation.status).toBe(201);
    const joined = await t.req("POST", "/api/invitations/accept", { token: null, body: { token: invitation.body.data.token, password: "watcher password" } });
    expect(joined.status).toBe(201);
    const cookie = joined.headers.get("set-cookie")!.split(";")[0]!;
    const { runId, reader } = await openLongStream({ cookie });
    const off = await t.req("POST", `/api/members/${joined.body.data.user.id}/deactivate`);
    expect(off.status).toBe(200);
    const events = await readToClose(reader);
    expect(events.some((e) => e.event === "end")).toBe(false);
    expect((await t.req("GET", `/api/runs/${runId}`)).body.data.status).toBe("running");
    expect((await t.req("POST", `/api/runs/${runId}/cancel`)).status).toBe(200);
  }, 30_000);
});

describe("over a real socket", () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer({ env: { WEFT_WORKERS: "1", WEFT_LOG_LEVEL: "warn" } });
  });
  afterAll(() => server?.stop());

  test("events arrive while the run executes, and the stream closes after end", async () => {
    const def = definition(chain({ name: "d", type: "PIECE", pieceId: "delay", actionId: "delay_for", config: { seconds: 1 } }, template("after", "x")));
    const created = (await (
      await server.fetch("/api/workflows", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "s", definition: def }),
      })
    ).json()) as any;
    const started = (await (
      await server.fetch(`/api/workflows/${created.data.id}/run?environment=test`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      })
    ).json()) as any;
    const res = await server.fetch(`/api/runs/${started.data.id}/stream`);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const seenAt: Record<string, number> = {};
    const t0 = Date.now();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
      for (const e of parseSse(text)) seenAt[`${e.event}:${e.data.status}`] ??= Date.now() - t0;
    }
    const events = parseSse(text);
    expect(events[events.length - 1]!.event).toBe("end");
    expect(events.some((e) => e.event === "run" && e.data.status === "paused")).toBe(true);
    // The pause was streamed before the end arrived about a second later.
    expect(seenAt["end:completed"]! - seenAt["run:paused"]!).toBeGreaterThan(500);
  });
});
