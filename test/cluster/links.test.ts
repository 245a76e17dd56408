/**
 * What crosses instances of a cluster (two `weft serve` on one PostgreSQL database): a run started on B is
 * streamed live on A (every step, in order, then `end`; a reconnect with Last-Event-ID resumes without repeats),
 * and cancelled from A while B executes it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase } from "../support/postgres-storage";
import { type ServerHandle, startServer } from "../support/server";

announceMissingPostgres();

let sink: ReturnType<typeof Bun.serve> | undefined;
const servers: ServerHandle[] = [];
const hits = new Map<string, number>();

beforeAll(() => {
  sink = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      await Bun.sleep(400);
      return Response.json({ path });
    },
  });
});
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
  sink?.stop(true);
});

interface Event {
  id: number;
  event: string;
  data: any;
}

function parse(text: string): Event[] {
  const events: Event[] = [];
  for (const block of text.split("\n\n")) {
    const fields: Record<string, string> = {};
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const at = line.indexOf(": ");
      fields[line.slice(0, at)] = line.slice(at + 2);
    }
    if (fields.event) events.push({ id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data!) });
  }
  return events;
}

async function stream(server: ServerHandle, runId: string, lastEventId?: number): Promise<Event[]> {
  const headers: Record<string, string> = {};
  if (lastEventId !== undefined) headers["last-event-id"] = String(lastEventId);
  const res = await server.fetch(`/api/runs/${runId}/stream`, { headers, signal: AbortSignal.timeout(20_000) });
  expect(res.status).toBe(200);
  return parse(await res.text());
}

const slow = (name: string, next?: Record<string, unknown>) => ({
  name,
  type: "PIECE",
  pieceId: "http",
  actionId: "send_request",
  config: { method: "GET", url: `http://127.0.0.1:${sink!.port}/{{trigger.body.tag}}/${name}`, timeout_ms: 10_000 },
  ...(next ? { nextAction: next } : {}),
});

describe.skipIf(!postgresBinaries())("two instances on one PostgreSQL database", () => {
  let a: ServerHandle;
  let b: ServerHandle;
  let token: string;

  beforeAll(async () => {
    const { url } = await freshPostgresDatabase();
    const env = { WEFT_DATABASE_URL: url, WEFT_HEARTBEAT_SECONDS: "1", WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "warn" };
    a = await startServer({ env });
    servers.push(a);
    const dir = mkdtempSync(join(tmpdir(), "weft-links-"));
    copyFileSync(join(a.dataDir, "encryption.key"), join(dir, "encryption.key"));
    b = await startServer({ env, dataDir: dir });
    servers.push(b);
    const made = await (
      await a.fetch("/api/workflows", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          name: "three slow steps",
          definition: {
            schemaVersion: 2,
            trigger: {
              name: "trigger",
              type: "webhook",
              pieceId: "webhook",
              actionId: "catch_webhook",
              config: {},
              nextAction: slow("one", slow("two", slow("three"))),
            },
          },
        }),
      })
    ).json();
    await a.fetch(`/api/workflows/${(made as any).data.id}/publish`, { method: "POST" });
    token = (made as any).data.webhookToken;
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
    for (const deadline = Date.now() + 5_000; !hits.has("/cancelled/one") && Date.now() < deadline; ) await Bun.sleep(20);
    const res = await a.fetch(`/api/runs/${runId}/cancel`, { method: "POST" });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body.data.status).toBe("cancelled");
    await Bun.sleep(1_200);
    expect(hits.has("/cancelled/three")).toBe(false);
    const seenByB = ((await (await b.fetch(`/api/runs/${runId}`)).json()) as any).data;
    expect(seenByB.status).toBe("cancelled");
  }, 30_000);
});
