/**
 * The pieces a cluster on one PostgreSQL database serves: a publish is checked against the pieces every
 * instance that executes runs serves (422 naming the instance that lacks one), a blank pin is filled with a
 * version they all serve, and a worker never keeps a run whose piece it lacks — the run waits for one that has it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, clusterEnv, startInstance } from "../support/cluster";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { networkPostgresDatabase } from "../support/postgres-storage";
import type { ServerHandle } from "../support/server";

announceMissingPostgres();

/** Test-only: a piece only some instances load (from their WEFT_PIECES_DIR). */
const EXTRA = `export default (sdk) => sdk.definePiece({
  id: "extra", name: "Extra", version: "1.4.0", description: "test-only: held by some instances",
  actions: [sdk.action({ id: "double", name: "Double", description: "", sideEffects: "pure",
    props: { n: sdk.Property.number({ required: true }) }, run: (ctx) => ({ doubled: ctx.config.n * 2 }) })],
});
`;

const servers: ServerHandle[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
});

describe.skipIf(!postgresBinaries())("the pieces a cluster serves", () => {
  let env: Record<string, string>;
  let piecesDir: string;
  const start = (role: "all" | "api" | "worker", withExtra: boolean) =>
    startInstance(servers, env, { role, env: withExtra ? { WEFT_PIECES_DIR: piecesDir } : {} });
  const definition = (pieceVersion?: string) => ({
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "webhook",
      pieceId: "webhook",
      actionId: "catch_webhook",
      config: {},
      nextAction: { name: "twice", type: "PIECE", pieceId: "extra", actionId: "double", config: { n: 21 }, ...(pieceVersion ? { pieceVersion } : {}) },
    },
  });

  beforeAll(async () => {
    const { url } = await networkPostgresDatabase();
    env = clusterEnv(url);
    piecesDir = mkdtempSync(join(tmpdir(), "weft-extra-"));
    writeFileSync(join(piecesDir, "extra.js"), EXTRA);
  });

  test("publishing needs every executing instance to serve the piece; the 422 names the one that lacks it", async () => {
    const api = await start("api", true);
    const lacking = await start("worker", false);
    const made = await call(api, "POST", "/api/workflows", { name: "uses extra", definition: definition() });
    expect(made.status).toBe(201);
    const refused = await call(api, "POST", `/api/workflows/${made.body.data.id}/publish`);
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body.error)).toContain(`(pid ${lacking.proc.pid})`);

    // That worker gone (a clean stop leaves the fleet) and one holding the piece started: the publish passes.
    await lacking.stop("SIGTERM");
    await start("worker", true);
    await Bun.sleep(1_100); // the api instance reads the fleet at most once a second
    const saved = await call(api, "PUT", `/api/workflows/${made.body.data.id}`, { definition: definition(), expectedRev: made.body.data.rev });
    expect(saved.status).toBe(200);
    const published = await call(api, "POST", `/api/workflows/${made.body.data.id}/publish`);
    expect(published).toMatchObject({ status: 200 });
    const live = await call(api, "GET", `/api/workflows/${made.body.data.id}`);
    expect(JSON.stringify(live.body.data.definition)).toContain('"pieceVersion":"1.4.0"');
  }, 60_000);

  test("a worker lacking a run's piece gives the run back: it waits, and a worker that has the piece runs it", async () => {
    const api = servers[0]!;
    const holder = servers[2]!;
    const list = (await call(api, "GET", "/api/workflows?limit=100")).body.data as Array<{ id: string; webhookToken?: string }>;
    const workflow = (await call(api, "GET", `/api/workflows/${list[0]!.id}`)).body.data;
    // The only executing instance now lacks the piece.
    await holder.stop("SIGTERM");
    await start("worker", false);
    const res = await fetch(`${api.url}/webhook/${workflow.webhookToken}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(202);
    const runId = ((await res.json()) as any).data.runId;
    await Bun.sleep(2_000);
    expect((await call(api, "GET", `/api/runs/${runId}`)).body.data.status).toBe("pending");

    await start("worker", true);
    let run: any;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(200)) {
      run = (await call(api, "GET", `/api/runs/${runId}?include=steps`)).body.data;
      if (run.status === "completed" || run.status === "failed") break;
    }
    expect(run.status).toBe("completed");
  }, 60_000);
});
