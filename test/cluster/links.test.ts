/**
 * What crosses instances of a cluster (two `weft serve` on one PostgreSQL database): a run started on B is
 * streamed live on A (every step, in order, then `end`; a reconnect with Last-Event-ID resumes without repeats),
 * and cancelled from A while B executes it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clusterEnv, effectSink, publishSinkChain, startInstance } from "../support/cluster";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { networkPostgresDatabase } from "../support/postgres-storage";
import type { ServerHandle } from "../support/server";
import { parseSse, type SseEvent } from "../support/sse";

announceMissingPostgres();

let sink: ReturnType<typeof effectSink>;
const servers: ServerHandle[] = [];

beforeAll(() => {
  sink = effectSink(400);
});
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
  sink.stop();
});

async function stream(server: ServerHandle, runId: string, lastEventId?: number): Promise<SseEvent[]> {
  const headers: Record<string, string> = {};
  if (lastEventId !== undefined) headers["last-event-id"] = String(lastEventId);
  const res = await server.fetch(`/api/runs/${runId}/stream`, { headers, signal: AbortSignal.timeout(20_000) });
  expect(res.status).toBe(200);
  return parseSse(await res.text());
}

describe.skipIf(!postgresBinaries())("two instances on one PostgreSQL database", () => {
  let a: ServerHandle;
  let b: ServerHandle;
  let token: string;

  beforeAll(async () => {
    const { url } = await networkPostgresDatabase();
    const env = clusterEnv(url);
    a = await startInstance(servers, env);
    b = await startInstance(servers, env);
    token = await publishSinkChain(a, sink.port, ["one", "two", "three"]);
  }, 60_000);

  const startOnB = async (tag: string): Promise<string> => {
    const res = await fetch(`${b.url}/webhook/${token}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ tag }) });
    expect(res.status).toBe(202);
    return ((await res.json()) as any).data.runId;
  };

  test("a run executing on B streams live on A: each step in order, then end; Last-Event-ID resumes", async () => {
    const runId = await startOnB("streamed");
    const live = await stream(a, runId);
    const ids = live.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    // Each step change once (the run's state as the stream opens may share the id of the step before it).
    const stepIds = live.filter((e) => e.event !== "run").map((e) => e.id);
    expect(new Set(stepIds).size).toBe(stepIds.length);
    const completedSteps = live.filter((e) => e.event === "step" && e.data.status === "completed").map((e) => e.data.nodeId);
    expect(completedSteps).toEqual(["one", "two", "three"]);
    expect(live.at(-1)).toMatchObject({ event: "end", data: { id: runId, status: "completed" } });
    // It was live: A saw the run running before it ended.
    expect(live.some((e) => e.event === "run" && e.data.status === "running")).toBe(true);

    // A reconnect after the first step resumes after it, without repeating it.
    const firstStep = live.find((e) => e.event === "step")!;
    const resumed = await stream(a, runId, firstStep.id);
    expect(resumed.every((e) => e.id > firstStep.id)).toBe(true);
    expect(resumed.at(-1)).toMatchObject({ event: "end", data: { status: "completed" } });
  }, 30_000);

  test("a run executing on B is cancelled from A: it ends cancelled and its later steps never run", async () => {
    const runId = await startOnB("cancelled");
    // Wait until B is inside the first step.
    for (const deadline = Date.now() + 5_000; !sink.hits.has("/cancelled/one") && Date.now() < deadline; ) await Bun.sleep(20);
    const res = await a.fetch(`/api/runs/${runId}/cancel`, { method: "POST" });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body.data.status).toBe("cancelled");
    await Bun.sleep(1_200);
    expect(sink.hits.has("/cancelled/three")).toBe(false);
    const seenByB = ((await (await b.fetch(`/api/runs/${runId}`)).json()) as any).data;
    expect(seenByB.status).toBe("cancelled");
  }, 30_000);
});
