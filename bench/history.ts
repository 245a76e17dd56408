/**
 * Run history at scale (issue "Ten million runs and still instant"): how a data directory and the Runs API
 * behave as the history grows, as a baseline before optimisation. For each size N:
 * - a fresh data directory: a real `weft serve` creates and publishes a few workflows through the API (and
 *   switches the young database to incremental vacuum, as on any new install), then stops;
 * - `seedRuns` fills it with N finished runs of those workflows (3 step rows each, mixed statuses, trigger
 *   types and environments, a tenth tagged `vip`, started over the last 30 days) in large transactions;
 * - figures: data-directory bytes per run after a checkpoint (and where they go, from dbstat); time from
 *   spawning `weft serve` to its first answered GET /healthz and to its first accepted webhook (also of the
 *   compiled binary dist/weft when built, before seeding and after: what the history adds; the median of
 *   three starts, each after the disk has taken what the page cache holds, see binaryStartMs); the first
 *   GET /api/runs after the start; warm p50/p95 of GET /api/runs under each filter and sort of spec 4.6, on
 *   first, middle, last and deep pages (page 10,000 at limit 50: 499,950 runs skipped), of GET /api/runs/{id}
 *   and of GET /api/workflows (sequential requests over loopback, a real token).
 *
 * The server runs with WEFT_RUN_RETENTION_DAYS=0 and WEFT_RUN_RETENTION_MAX=0 (keep everything): with the
 * defaults (30 days, 100,000 runs) its first retention sweep would start deleting the seeded history.
 *
 * With WEFT_BENCH_STORAGE=postgres the same figures are taken on PostgreSQL: the seeded data directory
 * is moved with `weft migrate --from DIR --to postgres://…` (as a user moving up would; its time is printed)
 * into a throwaway server (test/support/postgres.ts, fsync on, as SQLite's default commits), and every server
 * runs with WEFT_DATABASE_URL on that directory. Bytes per run are then the database's size
 * (pg_database_size, after a CHECKPOINT) over the runs, with the largest relations. Without PostgreSQL
 * installed (Debian package postgresql) the bench prints one line and exits.
 *
 *   WEFT_BENCH_HISTORY_SIZES=100000,1000000 bun bench/history.ts     (10000000 allowed: about 10 GB of disk)
 *   WEFT_BENCH_HISTORY_REQUESTS=50 WEFT_BENCH_HISTORY_WARMUP=5       (requests measured per figure, warm-ups)
 *   WEFT_BENCH_STORAGE=postgres                                       (sqlite by default)
 *   WEFT_BENCH_PG_SETTINGS=max_wal_size=4GB,wal_compression=lz4       (PostgreSQL server settings besides fsync=on)
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireDataDirLock } from "../src/store/data-dir-lock";
import { openDatabase } from "../src/store/sqlite/db";
import type { Db } from "../src/store/db";
import { RunStore } from "../src/store/sqlite/run-store";
import { runValues, stepValues, type RowValues, type RunRow, type StepRow } from "../src/store/run-rows";
import { FRESH_RUN } from "../src/engine/run-table";
import { sha256, stepIdOf } from "../src/lib/ids";
import { SQL } from "bun";
import { postgresBinaries, startPostgres, type PostgresHandle } from "../test/support/postgres";
import { BENCH_TOKEN, type BenchServer, benchApi, machine, reportGoal, ROOT, spawnBenchServer } from "./_support";

// ------------------------------------------------------------------------------------------ seeding

export interface SeedOptions {
  /** Runs start over this many days before `now` (default 30). */
  days?: number;
  /** Default Date.now(). */
  now?: number;
  /** Runs per transaction (default 25,000; 10,000–100,000 seed equally fast): memory stays flat, whatever the count. */
  transactionRuns?: number;
  /** Shares of failed and cancelled runs (default 0.08 and 0.02; the rest completed). */
  failedShare?: number;
  cancelledShare?: number;
  /** Share of test runs (drafts run from the editor; default 0.02). */
  testShare?: number;
  /** Share of runs tagged SEED_TAG (default 0: no run carries a tag). */
  tagShare?: number;
  /** Seed of the pseudo-random generator (same seed, same history). */
  seed?: number;
  /** Run ids to hand back, spread over the whole history (default 200). */
  sampleIds?: number;
  onProgress?: (runs: number, elapsedMs: number) => void;
}

export interface SeedResult {
  runs: number;
  steps: number;
  ms: number;
  runsPerSecond: number;
  /** Production (listed by default), by status, by trigger type, by workflow id, tagged SEED_TAG (by environment). */
  production: number;
  byStatus: Record<string, number>;
  byTag: Record<string, number>;
  byTrigger: Record<string, number>;
  byWorkflow: Record<string, number>;
  sampleIds: string[];
}

interface SeedWorkflow {
  id: string;
  name: string;
  workspaceId: string;
  orgId: string;
  triggerType: string;
  versionId: string | null;
  versionNumber: number | null;
  productionHash: string | null;
  testHash: string;
  steps: Array<{ name: string; type: string; pieceId: string | null; actionId: string | null }>;
}

/** The tag `tagShare` of the seeded runs carry. */
export const SEED_TAG = "vip";

/** Share of the runs each workflow gets, in creation order (a busy one, then quieter ones). */
const WORKFLOW_WEIGHTS = [0.4, 0.25, 0.15, 0.12, 0.08];

/** mulberry32: a small, fast, seedable generator (Math.random cannot be seeded). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The action chain of a definition (trigger.nextAction → nextAction …), as the engine writes its step rows. */
function actionChain(definition: any): SeedWorkflow["steps"] {
  const steps: SeedWorkflow["steps"] = [];
  for (let node = definition?.trigger?.nextAction; node; node = node.nextAction) {
    steps.push({ name: String(node.name), type: String(node.type ?? "PIECE"), pieceId: node.pieceId ?? null, actionId: node.actionId ?? null });
  }
  return steps;
}

/** The workflows of the database with what a run row of each needs; the definitions runs point at are stored. */
function seedWorkflows(db: Db, store: RunStore): SeedWorkflow[] {
  const rows = db
    .query(
      `SELECT w.id, w.name, w.workspace_id, w.org_id, w.definition AS draft, w.latest_version_id, v.number AS version_number, v.definition AS published
       FROM workflows w LEFT JOIN workflow_versions v ON v.id = w.latest_version_id ORDER BY w.created_at, w.id`,
    )
    .all() as Array<{
    id: string;
    name: string;
    workspace_id: string;
    org_id: string;
    draft: string;
    latest_version_id: string | null;
    version_number: number | null;
    published: string | null;
  }>;
  return rows.map((row) => {
    // As the engine does (run-start.ts): the run's definition is the JSON text of the executed definition, keyed by its SHA-256.
    const stored = (text: string) => {
      const canonical = JSON.stringify(JSON.parse(text));
      const hash = sha256(canonical);
      store.putDefinition(hash, canonical);
      return hash;
    };
    const draft = JSON.parse(row.draft);
    return {
      id: row.id,
      name: row.name,
      workspaceId: row.workspace_id,
      orgId: row.org_id,
      triggerType: String(draft.trigger?.type ?? "manual"),
      versionId: row.latest_version_id,
      versionNumber: row.version_number,
      productionHash: row.published ? stored(row.published) : null,
      testHash: stored(row.draft),
      steps: actionChain(row.published ? JSON.parse(row.published) : draft).slice(0, 3),
    };
  });
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Fills the database of `dataDir` (migrated through openDatabase) with `count` finished runs of its workflows,
 * oldest first, as the engine would have written them over time: UUIDv7 ids of their start instant, one step
 * per action of the workflow (3 for the bench's workflows) with small JSON payloads, packed into the run's row
 * as the run writer stores a finished run. The data directory must not be in use (its lock is taken) and must
 * hold at least one workflow. Inserts go through RunStore's insertFinishedRun, `transactionRuns` runs per
 * transaction, with synchronous=OFF and a rollback journal for the load; the database is back in WAL mode,
 * checkpointed, when it returns.
 */
export function seedRuns(dataDir: string, count: number, options: SeedOptions = {}): SeedResult {
  const lock = acquireDataDirLock(dataDir);
  const db = openDatabase(join(dataDir, "weft.db"));
  try {
    // A bulk load into a database nobody else has open: durability per transaction buys nothing (a crash
    // means seeding again), and a rollback journal writes each new page once where the WAL writes it twice
    // (log, then checkpoint): a third faster on a 2-core VM. The WAL mode is restored below.
    db.run("PRAGMA synchronous = OFF");
    db.run("PRAGMA cache_size = -262144");
    const mode = db.query("PRAGMA journal_mode = TRUNCATE").get() as { journal_mode: string };
    if (mode.journal_mode !== "truncate") throw new Error(`could not leave WAL mode for the load (${mode.journal_mode}): is the data directory in use?`);
    const store = new RunStore(db);
    const workflows = db.transaction(() => seedWorkflows(db, store)).immediate();
    if (workflows.length === 0) throw new Error(`no workflow in ${dataDir}: create one (through the API) before seeding runs`);
    return insertHistory(db, store, workflows, count, options);
  } finally {
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    lock.release();
  }
}

function insertHistory(db: Db, store: RunStore, workflows: SeedWorkflow[], count: number, options: SeedOptions): SeedResult {
  const rnd = random(options.seed ?? 7);
  const now = options.now ?? Date.now();
  const span = (options.days ?? 30) * 86_400_000;
  const from = now - span;
  const slot = span / Math.max(1, count);
  const failedShare = options.failedShare ?? 0.08;
  const cancelledShare = options.cancelledShare ?? 0.02;
  const testShare = options.testShare ?? 0.02;
  const tagShare = options.tagShare ?? 0;
  const tagged = JSON.stringify([SEED_TAG]);
  const perTransaction = Math.max(1, options.transactionRuns ?? 25_000);
  const sampleEvery = Math.max(1, Math.floor(count / Math.max(1, options.sampleIds ?? 200)));

  const weights = workflows.map((_, i) => WORKFLOW_WEIGHTS[i] ?? WORKFLOW_WEIGHTS[WORKFLOW_WEIGHTS.length - 1]!);
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  weights.reduce((acc, w, i) => (cumulative[i] = acc + w / weightSum), 0);

  const result: SeedResult = {
    runs: 0,
    steps: 0,
    ms: 0,
    runsPerSecond: 0,
    production: 0,
    byStatus: {},
    byTag: {},
    byTrigger: {},
    byWorkflow: {},
    sampleIds: [],
  };
  const bump = (map: Record<string, number>, key: string) => {
    map[key] = (map[key] ?? 0) + 1;
  };

  // One row object of each kind, refilled per row: runValues/stepValues copy it into RunStore's column order.
  const run: RunRow = {
    ...FRESH_RUN,
    id: "",
    workspace_id: "",
    org_id: "",
    workflow_id: "",
    workflow_name: "",
    workflow_trigger_type: null,
    status: "completed",
    trigger_type: "",
    trigger_data: "",
    environment: "production",
    version_id: null,
    version_number: null,
    executed_version_id: null,
    executed_version_number: null,
    definition_hash: "",
    started_at: "",
    started_from_step: null,
    retry_of_run_id: null,
    parent_run_id: null,
    depth: 0,
  };
  const step: StepRow = {
    id: "",
    run_id: "",
    seq: 0,
    node_id: "",
    node_type: "PIECE",
    piece_id: null,
    action_id: null,
    display_name: null,
    status: "completed",
    input_data: null,
    output_data: null,
    output_truncated: 0,
    error_message: null,
    retry_count: 0,
    started_at: null,
    finished_at: null,
    duration_ms: null,
  };

  const insertOne = (i: number) => {
    const startMs = Math.floor(from + (i + rnd()) * slot);
    const pick = rnd();
    let w = 0;
    while (w < workflows.length - 1 && pick > cumulative[w]!) w++;
    const wf = workflows[w]!;
    const test = wf.productionHash === null || rnd() < testShare;
    const roll = rnd();
    const status = roll < failedShare ? "failed" : roll < failedShare + cancelledShare ? "cancelled" : "completed";
    const order = 10_000 + Math.floor(rnd() * 90_000);
    const total = Math.round(rnd() * 50_000) / 100;
    const email = `customer${order % 5000}@example.com`;
    const body = `{"orderId":${order},"email":"${email}","total":${total}}`;

    let triggerType: string;
    let triggerData: string;
    if (test) {
      triggerType = "manual";
      triggerData = `{"body":${body},"headers":{},"query":{}}`;
    } else if (wf.triggerType === "webhook") {
      triggerType = rnd() < 0.95 ? "webhook" : "api";
      triggerData =
        triggerType === "webhook"
          ? `{"method":"POST","headers":{"content-type":"application/json","user-agent":"Shopify-Captain-Hook","content-length":"${body.length}","x-request-id":"${order.toString(16)}${i.toString(16)}"},"query":{},"body":${body}}`
          : `{"body":${body},"headers":{},"query":{}}`;
    } else if (wf.triggerType === "cron") {
      triggerType = "cron";
      triggerData = `{"scheduledAt":"${iso(startMs - (startMs % 60_000))}","expression":"0 3 1 1 *","timezone":"UTC"}`;
    } else {
      const r = rnd();
      triggerType = r < 0.4 ? "manual" : r < 0.9 ? "api" : "mcp";
      triggerData = `{"body":${body},"headers":{},"query":{}}`;
    }

    // Duration: mostly tens to hundreds of ms, a long tail to ~8 s; the last step (the "I/O" one) takes most.
    const r4 = rnd();
    const duration = 5 + Math.floor(r4 * r4 * r4 * r4 * 8_000) + (status === "failed" ? 200 : 0);
    const queued = Math.floor(rnd() * 5);
    const id = Bun.randomUUIDv7("hex", startMs);

    run.id = id;
    run.workspace_id = wf.workspaceId;
    run.org_id = wf.orgId;
    run.workflow_id = wf.id;
    run.workflow_name = wf.name;
    run.workflow_trigger_type = wf.triggerType;
    run.status = status;
    run.trigger_type = triggerType;
    run.trigger_data = triggerData;
    run.environment = test ? "test" : "production";
    run.version_id = test ? null : wf.versionId;
    run.version_number = test ? null : wf.versionNumber;
    run.executed_version_id = test ? null : wf.versionId;
    run.executed_version_number = test ? null : wf.versionNumber;
    run.definition_hash = test ? wf.testHash : wf.productionHash!;
    run.started_at = iso(startMs);
    run.finished_at = iso(startMs + duration);
    run.duration_ms = duration;
    run.error_message = null;
    run.step_total = wf.steps.length;
    run.step_failed = status === "failed" ? 1 : 0;
    run.event_seq = 2 * wf.steps.length + 2;
    // Drawn only when some runs are tagged, so a history without tags is the one seeded before tags were.
    run.tags = tagShare > 0 && rnd() < tagShare ? tagged : "[]";

    // Step payloads by position: set fields, render a text, serialise (small JSON, like the bench workflows).
    let at = startMs + queued;
    const last = wf.steps.length - 1;
    const steps: RowValues[] = [];
    for (let s = 0; s <= last; s++) {
      const node = wf.steps[s]!;
      const stepMs = s === last ? Math.max(0, startMs + duration - at) : Math.min(Math.floor(rnd() * 4), Math.max(0, startMs + duration - at));
      step.id = stepIdOf(id, s + 1); // as the engine names a run's steps (lib/ids.ts)
      step.run_id = id;
      step.seq = s + 2;
      step.node_id = node.name;
      step.node_type = node.type;
      step.piece_id = node.pieceId;
      step.action_id = node.actionId;
      if (s % 3 === 0) {
        step.input_data = `{"fields":${body}}`;
        step.output_data = body;
      } else if (s % 3 === 1) {
        const text = `Order ${order} from ${email}: ${total} EUR`;
        step.input_data = `{"template":"${text}"}`;
        step.output_data = `{"text":"${text}"}`;
      } else {
        step.input_data = `{"value":${body},"pretty":false}`;
        step.output_data = `{"json":${JSON.stringify(body)}}`;
      }
      step.status = "completed";
      step.error_message = null;
      if (s === last && status === "failed") {
        step.status = "failed";
        step.output_data = null;
        step.error_message = `upstream answered 502 Bad Gateway for order ${order}`;
        run.error_message = `step "${node.name}" failed: ${step.error_message}`;
      } else if (s === last && status === "cancelled") {
        step.status = "cancelled";
        step.output_data = null;
        step.error_message = "cancelled";
        run.error_message = "cancelled";
      }
      step.started_at = iso(at);
      step.finished_at = iso(at + stepMs);
      step.duration_ms = stepMs;
      steps.push(stepValues(step));
      at += stepMs;
    }
    // As the run writer stores a finished run: its steps and cold columns in its record (run-records.ts).
    store.insertFinishedRun(runValues(run), steps);

    result.steps += wf.steps.length;
    if (!test) result.production++;
    bump(result.byStatus, `${run.environment}:${status}`);
    bump(result.byTrigger, `${run.environment}:${triggerType}`);
    bump(result.byWorkflow, `${run.environment}:${wf.id}`);
    if (run.tags !== "[]") bump(result.byTag, `${run.environment}:${SEED_TAG}`);
    if (i % sampleEvery === 0) result.sampleIds.push(id);
  };

  const started = performance.now();
  const batch = db.transaction((first: number, end: number) => {
    for (let i = first; i < end; i++) insertOne(i);
  });
  for (let first = 0; first < count; first += perTransaction) {
    const end = Math.min(count, first + perTransaction);
    batch.immediate(first, end);
    result.runs = end;
    options.onProgress?.(end, performance.now() - started);
  }
  result.ms = performance.now() - started;
  result.runsPerSecond = count / Math.max(0.001, result.ms / 1000);
  return result;
}

// ------------------------------------------------------------------------------------------ server

const definitionOf = (trigger: Record<string, unknown>, steps: Array<Record<string, unknown>>) => {
  let next: Record<string, unknown> | undefined;
  for (let i = steps.length - 1; i >= 0; i--) next = { ...steps[i], ...(next ? { nextAction: next } : {}) };
  return {
    schemaVersion: 2,
    trigger: { name: "trigger", ...trigger, ...(next ? { nextAction: next } : {}) },
    settings: {},
    variables: {},
    annotations: null,
    pinnedData: {},
  };
};

/** Three actions, the payload shapes seedRuns writes: set fields → render a text → serialise. */
const threeSteps = (source: string) => [
  {
    name: "shape",
    type: "PIECE",
    pieceId: "data",
    actionId: "set_fields",
    config: { fields: { orderId: `{{${source}.orderId}}`, email: `{{${source}.email}}`, total: `{{${source}.total}}` } },
  },
  {
    name: "render",
    type: "PIECE",
    pieceId: "text",
    actionId: "template",
    config: { template: "Order {{shape.output.orderId}} from {{shape.output.email}}: {{shape.output.total}} EUR" },
  },
  { name: "encode", type: "PIECE", pieceId: "data", actionId: "to_json", config: { value: "{{shape.output}}", pretty: false } },
];

const webhook = { type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} };
/** Published workflows, in order of WORKFLOW_WEIGHTS (the first is the busiest). */
const BENCH_WORKFLOWS = [
  { name: "Shop orders → fulfilment", definition: definitionOf(webhook, threeSteps("trigger.body")) },
  { name: "Payment events", definition: definitionOf(webhook, threeSteps("trigger.body")) },
  {
    name: "Nightly report",
    definition: definitionOf(
      { type: "cron", pieceId: "schedule", actionId: "cron", config: { expression: "0 3 1 1 *", timezone: "UTC" } },
      threeSteps("trigger"),
    ),
  },
  { name: "CRM sync", definition: definitionOf({ type: "manual", config: {} }, threeSteps("trigger.body")) },
  { name: "Support tickets", definition: definitionOf(webhook, threeSteps("trigger.body")) },
];

/** The compiled binary (`npm run build`), when built: start-up is also measured with it. */
const BINARY = join(ROOT, "dist", "weft");

/**
 * `weft serve` from source (or the compiled binary) on `dataDir`, keeping every run (retention off), not yet
 * answering; on the PostgreSQL database `databaseUrl` when given (the data directory still holds its keys).
 */
const spawnServer = (dataDir: string, binary = false, databaseUrl?: string) =>
  spawnBenchServer(binary ? [BINARY, "serve"] : [process.execPath, `${ROOT}/src/main.ts`, "serve"], {
    WEFT_DATA_DIR: dataDir,
    WEFT_RUN_RETENTION_DAYS: "0",
    WEFT_RUN_RETENTION_MAX: "0",
    ...(databaseUrl ? { WEFT_DATABASE_URL: databaseUrl } : {}),
  });

/** One spawn, two pollers: GET /healthz and a webhook (202 once its run is queued); ms since the spawn. */
const startTimes = (server: BenchServer, webhookPath: string) =>
  Promise.all([
    firstAnswer(server, () => fetch(`${server.url}/healthz`), 200),
    firstAnswer(
      server,
      () =>
        fetch(`${server.url}${webhookPath}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"orderId":1,"email":"a@b.c","total":1}',
        }),
      202,
    ),
  ]);

/** Writes every page the page cache holds to the disk (`sync`), so no start measured pays for the seeder's writes. */
const flushPageCache = () => Bun.spawnSync(["sync"]);

/** Starts of the compiled binary measured per figure; the median is the figure. */
const BINARY_STARTS = 3;

/**
 * Spawn → first webhook 202 of the compiled binary on `dataDir` (or `databaseUrl`), the median of
 * BINARY_STARTS starts, or null when it is not built. Before each start the page cache's unwritten pages go to
 * the disk (`sync`): the seeder has just written gigabytes, and the first fsync after that waits for the
 * file system to write them out (327 ms measured with 2.4 GB unwritten, 1 ms without; the start's first commit
 * or its first webhook's pays it). That is the disk catching up with the bench, not the start of a server.
 */
async function binaryStartMs(dataDir: string, webhookPath: string, databaseUrl?: string): Promise<number | null> {
  if (!existsSync(BINARY)) return null;
  const starts: number[] = [];
  for (let i = 0; i < BINARY_STARTS; i++) {
    flushPageCache();
    const server = await spawnServer(dataDir, true, databaseUrl);
    try {
      starts.push((await startTimes(server, webhookPath))[1]);
    } finally {
      await server.stop();
    }
  }
  return starts.sort((a, b) => a - b)[Math.floor(starts.length / 2)]!;
}

/** Polls `request` every millisecond until it answers `status`; the time since the spawn, ms. */
export async function firstAnswer(server: BenchServer, request: () => Promise<Response>, status: number, timeoutMs = 900_000): Promise<number> {
  for (;;) {
    try {
      const res = await request();
      await res.arrayBuffer();
      if (res.status === status) return performance.now() - server.spawned;
    } catch {}
    if (server.proc.exitCode !== null) throw new Error(`weft serve exited with code ${server.proc.exitCode}`);
    if (performance.now() - server.spawned > timeoutMs) throw new Error("server did not answer");
    await Bun.sleep(1);
  }
}

const auth = { authorization: `Bearer ${BENCH_TOKEN}` };

/** A fresh data directory with the bench's workflows created and published through the API. */
export async function prepareDataDir(): Promise<{ dataDir: string; workflows: Array<{ id: string; name: string; webhookPath: string | null }> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "weft-history-"));
  const server = await spawnServer(dataDir);
  await firstAnswer(server, () => fetch(`${server.url}/healthz`), 200);
  const workflows: Array<{ id: string; name: string; webhookPath: string | null }> = [];
  for (const { name, definition } of BENCH_WORKFLOWS) {
    const created = await benchApi(server.url)("POST", "/api/workflows", { name, definition });
    const published = await benchApi(server.url)("POST", `/api/workflows/${created.data.id}/publish`);
    const hook = published.data.webhookUrl as string | null | undefined;
    workflows.push({ id: created.data.id, name, webhookPath: hook ? new URL(hook).pathname : null });
  }
  await server.stop();
  return { dataDir, workflows };
}

// ------------------------------------------------------------------------------------------ figures

export function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? dirBytes(path) : statSync(path).size;
  }
  return total;
}

const fileBytes = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** Bytes of the run tables and their indexes (dbstat), largest first. */
function tableBytes(dataDir: string): Array<{ name: string; bytes: number }> {
  const db = openDatabase(join(dataDir, "weft.db"), { migrate: false });
  try {
    return db
      .query(
        `SELECT name, SUM(pgsize) AS bytes FROM dbstat WHERE name IN ('runs', 'run_steps', 'run_definitions', 'run_names', 'run_hours', 'run_tags') OR name LIKE 'runs_%' OR name LIKE 'run_steps_%' OR name = 'sqlite_autoindex_runs_1'
         GROUP BY name ORDER BY bytes DESC`,
      )
      .all() as Array<{ name: string; bytes: number }>;
  } finally {
    db.close();
  }
}

interface Timing {
  p50: number;
  p95: number;
  max: number;
}

/** Share of the seeded runs tagged SEED_TAG (the tag filter's pages are measured on them). */
const TAG_SHARE = 0.1;

const REQUESTS = Number(process.env.WEFT_BENCH_HISTORY_REQUESTS ?? 50);
const WARMUP = Number(process.env.WEFT_BENCH_HISTORY_WARMUP ?? 5);

/** WARMUP requests, then REQUESTS timed ones, one after another; `check` validates every reply. */
async function timed(url: string, paths: (i: number) => string, check: (json: any, path: string) => void): Promise<Timing & { last: any }> {
  let last: any;
  const ms: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const path = paths(i);
    const t0 = performance.now();
    const res = await fetch(`${url}${path}`, { headers: auth });
    const json = (await res.json()) as any;
    const elapsed = performance.now() - t0;
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    check(json, path);
    last = json;
    if (i >= WARMUP) ms.push(elapsed);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.ceil(q * ms.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), max: ms[ms.length - 1]!, last };
}

const f = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const thousands = (n: number) => n.toLocaleString("en-US");

interface SizeFigures {
  n: number;
  seedRunsPerSecond: number;
  bytesPerRun: number;
  /** Of bytesPerRun, run_tags' (the tagged tenth of the runs). */
  tagBytesPerRun: number;
  healthzMs: number;
  webhookMs: number;
  firstListMs: number;
  /** Compiled binary: spawn → first webhook 202 before seeding and after (null: not built). */
  binaryEmptyMs: number | null;
  binaryWebhookMs: number | null;
  timings: Array<{ label: string; t: Timing }>;
}

/** The storage measured (WEFT_BENCH_STORAGE, also read by bench/prune.ts); PostgreSQL's throwaway server once started. */
export const STORAGE = process.env.WEFT_BENCH_STORAGE === "postgres" ? "postgres" : "sqlite";
let postgres: PostgresHandle | undefined;
let databases = 0;

/** WEFT_BENCH_PG_SETTINGS ("name=value,name=value"): server settings on top of fsync=on, to measure a tuning. */
function benchPostgresSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const pair of (process.env.WEFT_BENCH_PG_SETTINGS ?? "").split(",").filter(Boolean)) {
    const [name, value] = pair.split("=");
    if (!name || value === undefined || !/^[a-z_]+$/.test(name) || !/^[\w.]+$/.test(value)) {
      throw new Error(`WEFT_BENCH_PG_SETTINGS: "${pair}" is not name=value; use e.g. max_wal_size=4GB,wal_compression=lz4`);
    }
    settings[name] = value;
  }
  return settings;
}

/** Ends a bench asked to measure PostgreSQL (WEFT_BENCH_STORAGE) on a machine without it, saying so in one line. */
export function exitUnlessPostgresInstalled(bench: string): void {
  if (STORAGE !== "postgres" || postgresBinaries()) return;
  console.log(`bench/${bench} (PostgreSQL) skipped: PostgreSQL is not installed (Debian package postgresql)`);
  process.exit(0);
}

/** Stops the bench's PostgreSQL server, if one was started. */
export async function stopPostgres(): Promise<void> {
  await postgres?.stop();
  postgres = undefined;
}

/** A new, empty database on the bench's PostgreSQL server, its URL and how to drop it. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  postgres ??= await startPostgres({ settings: { fsync: "on", ...benchPostgresSettings() } });
  const pg = postgres;
  const name = `weft_history_${++databases}`;
  const admin = new SQL(pg.url, { adapter: "postgres", max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  return {
    url: `postgres://${pg.user}:${pg.password}@${pg.host}:${pg.port}/${name}`,
    drop: async () => {
      const again = new SQL(pg.url, { adapter: "postgres", max: 1 });
      await again.unsafe(`DROP DATABASE ${name} WITH (FORCE)`);
      await again.close();
    },
  };
}

/** `weft migrate --from dataDir --to url`, as a user moving up runs it; its time, ms. */
export async function copyToPostgres(dataDir: string, url: string): Promise<number> {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, `${ROOT}/src/main.ts`, "migrate", "--from", dataDir, "--to", url], {
    cwd: ROOT,
    env: { ...process.env, WEFT_LOG_LEVEL: "warn", WEFT_DATA_DIR: dataDir },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`weft migrate --from --to failed (${code}): ${stderr}${stdout}`);
  return performance.now() - started;
}

/**
 * The database's size after a checkpoint, its largest relations (tables with their TOAST, indexes alone), and
 * run_tags' with its index (`tags`).
 */
export async function postgresBytes(url: string): Promise<{ total: number; tags: number; relations: Array<{ name: string; bytes: number }> }> {
  const db = new SQL(url, { adapter: "postgres", max: 1 });
  try {
    await db`CHECKPOINT`;
    const [{ total }] = await db`SELECT pg_database_size(current_database())::bigint AS total`;
    const [{ tags }] = await db`SELECT pg_total_relation_size('run_tags')::bigint AS tags`;
    const relations = await db`
      SELECT c.relname AS name, (CASE WHEN c.relkind = 'r' THEN pg_table_size(c.oid) ELSE pg_relation_size(c.oid) END)::bigint AS bytes
      FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'i')
      ORDER BY bytes DESC LIMIT 10`;
    return {
      total: Number(total),
      tags: Number(tags),
      relations: relations.map((r: { name: string; bytes: string }) => ({ name: r.name, bytes: Number(r.bytes) })),
    };
  } finally {
    await db.close();
  }
}

async function measure(n: number): Promise<SizeFigures> {
  console.log(`\n--- ${thousands(n)} runs (${STORAGE}) ---`);
  const { dataDir, workflows } = await prepareDataDir();
  const hook = workflows.find((w) => w.webhookPath)!;
  let database: { url: string; drop: () => Promise<void> } | undefined;
  try {
    // The compiled binary's start before any run is stored: what the history adds is the difference. On
    // PostgreSQL it starts on a copy of the empty data directory (its webhook's run stays in that copy).
    let binaryEmptyMs: number | null;
    if (STORAGE === "postgres") {
      const empty = await freshDatabase();
      await copyToPostgres(dataDir, empty.url);
      binaryEmptyMs = await binaryStartMs(dataDir, hook.webhookPath!, empty.url);
      await empty.drop();
    } else binaryEmptyMs = await binaryStartMs(dataDir, hook.webhookPath!);
    let lastReport = 0;
    const seeded = seedRuns(dataDir, n, {
      tagShare: TAG_SHARE,
      onProgress: (runs, ms) => {
        if (ms - lastReport < 10_000 || runs === n) return;
        lastReport = ms;
        console.log(`  seeding: ${thousands(runs)} runs after ${(ms / 1000).toFixed(0)} s`);
      },
    });
    console.log(
      `seeded ${thousands(seeded.runs)} runs with ${thousands(seeded.steps)} steps (packed into their runs) in ${(seeded.ms / 1000).toFixed(1)} s: ${thousands(Math.round(seeded.runsPerSecond))} runs/s (${thousands(Math.round((seeded.runsPerSecond * seeded.steps) / seeded.runs))} steps/s)`,
    );
    console.log(
      `  mix: ${Object.entries(seeded.byStatus)
        .map(([k, v]) => `${k} ${((100 * v) / n).toFixed(1)} %`)
        .join(", ")}; triggers: ${Object.entries(seeded.byTrigger)
        .map(([k, v]) => `${k} ${((100 * v) / n).toFixed(1)} %`)
        .join(", ")}`,
    );

    // The tags of a tenth of the runs (TAG_SHARE) are held in run_tags: its bytes are told apart, since the goal of
    // ≤ 500 bytes per run was set, and met, on a history without tags.
    let bytesPerRun: number;
    let tagBytesPerRun: number;
    if (STORAGE === "postgres") {
      database = await freshDatabase();
      const copyMs = await copyToPostgres(dataDir, database.url);
      console.log(`weft migrate --from --to: ${thousands(n)} runs copied into PostgreSQL in ${(copyMs / 1000).toFixed(1)} s`);
      const size = await postgresBytes(database.url);
      bytesPerRun = size.total / n;
      tagBytesPerRun = size.tags / n;
      console.log(
        `database: ${mb(size.total)} = ${bytesPerRun.toFixed(0)} bytes/run (pg_database_size after a CHECKPOINT; run_tags ${tagBytesPerRun.toFixed(0)} of them)`,
      );
      console.log(`  largest relations: ${size.relations.map((r) => `${r.name} ${(r.bytes / n).toFixed(0)} B/run`).join(", ")}`);
    } else {
      // Size after the seeder's checkpoint (TRUNCATE): the WAL is empty, the database holds everything.
      const dbFile = fileBytes(join(dataDir, "weft.db"));
      const walFile = fileBytes(join(dataDir, "weft.db-wal"));
      bytesPerRun = (dbFile + walFile) / n;
      const tables = tableBytes(dataDir);
      tagBytesPerRun = (tables.find((t) => t.name === "run_tags")?.bytes ?? 0) / n;
      console.log(
        `data dir: weft.db ${mb(dbFile)} + WAL ${mb(walFile)} = ${bytesPerRun.toFixed(0)} bytes/run (whole data dir ${mb(dirBytes(dataDir))}; run_tags ${tagBytesPerRun.toFixed(0)} of them)`,
      );
      console.log(`  by table/index: ${tables.map((t) => `${t.name} ${(t.bytes / n).toFixed(0)} B/run`).join(", ")}`);
    }

    let figures: SizeFigures;
    // Start-up from source: GET /healthz and the busiest workflow's webhook (after the disk took the seeder's
    // writes, as for the binary below).
    flushPageCache();
    const server = await spawnServer(dataDir, false, database?.url);
    try {
      const [healthzMs, webhookMs] = await startTimes(server, hook.webhookPath!);
      const t0 = performance.now();
      const first = await benchApi(server.url)("GET", "/api/runs");
      const firstListMs = performance.now() - t0;
      console.log(
        `start: spawn → first GET /healthz answered ${f(healthzMs)} ms; → first webhook accepted (202) ${f(webhookMs)} ms; first GET /api/runs after that ${f(firstListMs)} ms (total ${thousands(first.pagination.total)})`,
      );

      // Every default-filtered total must count the seeded production runs plus the webhook run above.
      const busiest = workflows[0]!;
      // (and those the binary's starts before seeding accepted, unless they went into PostgreSQL's empty copy).
      const hookRuns = binaryEmptyMs === null || STORAGE === "postgres" ? 1 : 1 + BINARY_STARTS;
      const expectProduction = seeded.production + hookRuns;
      const busiestRuns = (seeded.byWorkflow[`production:${busiest.id}`] ?? 0) + (hook.id === busiest.id ? hookRuns : 0);
      const totalIs = (expected: number) => (json: any, path: string) => {
        if (json.pagination.total !== expected) throw new Error(`GET ${path}: total ${json.pagination.total}, expected ${expected}`);
        if (json.pagination.totalPages !== Math.ceil(expected / json.pagination.limit))
          throw new Error(`GET ${path}: totalPages ${json.pagination.totalPages}`);
      };
      const lastPage = Math.ceil(expectProduction / 20);
      const failed = seeded.byStatus["production:failed"] ?? 0;
      // The webhook runs of the start measurements completed.
      const completed = (seeded.byStatus["production:completed"] ?? 0) + hookRuns;
      const tagged = seeded.byTag[`production:${SEED_TAG}`] ?? 0;
      const busiestLast = Math.max(1, Math.ceil(busiestRuns / 20));
      const listFigures: Array<{ label: string; path: string; expected: number }> = [
        { label: "GET /api/runs (newest, page 1)", path: "/api/runs", expected: expectProduction },
        { label: "GET /api/runs?status=failed", path: "/api/runs?status=failed", expected: seeded.byStatus["production:failed"] ?? 0 },
        { label: "GET /api/runs?status=cancelled", path: "/api/runs?status=cancelled", expected: seeded.byStatus["production:cancelled"] ?? 0 },
        {
          label: "GET /api/runs?workflowId=<busiest>",
          path: `/api/runs?workflowId=${busiest.id}`,
          expected: busiestRuns,
        },
        { label: "GET /api/runs?triggerType=cron", path: "/api/runs?triggerType=cron", expected: seeded.byTrigger["production:cron"] ?? 0 },
        { label: "GET /api/runs?page=1000", path: "/api/runs?page=1000", expected: expectProduction },
        { label: "GET /api/runs?page=<last>", path: `/api/runs?page=${lastPage}`, expected: expectProduction },
        {
          label: "GET /api/runs?status=failed&page=<middle>",
          path: `/api/runs?status=failed&page=${Math.max(1, Math.ceil(failed / 40))}`,
          expected: failed,
        },
        {
          label: "GET /api/runs?workflowId=<busiest>&page=<last>",
          path: `/api/runs?workflowId=${busiest.id}&page=${busiestLast}`,
          expected: busiestRuns,
        },
        { label: "GET /api/runs?sort=oldest", path: "/api/runs?sort=oldest", expected: expectProduction },
        { label: "GET /api/runs?sort=oldest&page=<middle>", path: `/api/runs?sort=oldest&page=${Math.ceil(lastPage / 2)}`, expected: expectProduction },
        { label: "GET /api/runs?sort=duration", path: "/api/runs?sort=duration", expected: expectProduction },
        { label: "GET /api/runs?sort=duration&page=50", path: "/api/runs?sort=duration&page=50", expected: expectProduction },
        { label: "GET /api/runs?environment=all&limit=100", path: "/api/runs?environment=all&limit=100", expected: seeded.runs + hookRuns },
        // Deep pages of every sort and of the tag filter (limit 50, the API's default is 20 and its maximum 100).
        { label: "GET /api/runs?page=10000&limit=50", path: "/api/runs?page=10000&limit=50", expected: expectProduction },
        { label: "GET /api/runs?sort=oldest&page=10000&limit=50", path: "/api/runs?sort=oldest&page=10000&limit=50", expected: expectProduction },
        {
          label: "GET /api/runs?status=completed&page=10000&limit=50",
          path: "/api/runs?status=completed&page=10000&limit=50",
          expected: completed,
        },
        {
          label: "GET /api/runs?sort=duration&page=<middle>",
          path: `/api/runs?sort=duration&page=${Math.ceil(lastPage / 2)}`,
          expected: expectProduction,
        },
        { label: "GET /api/runs?sort=duration&page=<last>", path: `/api/runs?sort=duration&page=${lastPage}`, expected: expectProduction },
        {
          label: "GET /api/runs?sort=duration&page=10000&limit=50",
          path: "/api/runs?sort=duration&page=10000&limit=50",
          expected: expectProduction,
        },
        {
          label: "GET /api/runs?sort=duration&status=failed&page=<middle>",
          path: `/api/runs?sort=duration&status=failed&page=${Math.max(1, Math.ceil(failed / 40))}`,
          expected: failed,
        },
        {
          label: "GET /api/runs?sort=duration&workflowId=<busiest>&page=<middle>",
          path: `/api/runs?sort=duration&workflowId=${busiest.id}&page=${Math.ceil(busiestLast / 2)}`,
          expected: busiestRuns,
        },
        { label: `GET /api/runs?tag=${SEED_TAG}`, path: `/api/runs?tag=${SEED_TAG}`, expected: tagged },
        {
          label: `GET /api/runs?tag=${SEED_TAG}&page=<middle>`,
          path: `/api/runs?tag=${SEED_TAG}&page=${Math.max(1, Math.ceil(tagged / 40))}`,
          expected: tagged,
        },
        {
          label: `GET /api/runs?tag=${SEED_TAG}&page=<last>`,
          path: `/api/runs?tag=${SEED_TAG}&page=${Math.max(1, Math.ceil(tagged / 20))}`,
          expected: tagged,
        },
        { label: `GET /api/runs?tag=${SEED_TAG}&sort=duration`, path: `/api/runs?tag=${SEED_TAG}&sort=duration`, expected: tagged },
        {
          label: `GET /api/runs?tag=${SEED_TAG}&sort=duration&page=<middle>`,
          path: `/api/runs?tag=${SEED_TAG}&sort=duration&page=${Math.max(1, Math.ceil(tagged / 40))}`,
          expected: tagged,
        },
      ];
      const timings: Array<{ label: string; t: Timing }> = [];
      for (const { label, path, expected } of listFigures) {
        const t = await timed(server.url, () => path, totalIs(expected));
        timings.push({ label, t });
        console.log(
          `${label.padEnd(64)} p50 ${f(t.p50).padStart(7)} ms  p95 ${f(t.p95).padStart(7)} ms  max ${f(t.max).padStart(7)} ms  (total ${thousands(expected)})`,
        );
      }
      console.log(`date-range filter: the contract (spec 4.6) has none (no from/to/since parameter); not measured`);

      // Run detail: a different run each request, spread over the whole history; every one must read back with its 3 steps.
      const ids = seeded.sampleIds;
      const detail = await timed(
        server.url,
        (i) => `/api/runs/${ids[i % ids.length]}`,
        (json, path) => {
          const steps = json.data.steps as any[];
          if (steps.length !== 3 || steps.some((s) => !s.nodeId || s.inputData === undefined)) throw new Error(`GET ${path}: ${steps.length} steps`);
        },
      );
      timings.push({ label: "GET /api/runs/{id} (random runs)", t: detail });
      console.log(
        `${"GET /api/runs/{id} (random runs)".padEnd(64)} p50 ${f(detail.p50).padStart(7)} ms  p95 ${f(detail.p95).padStart(7)} ms  max ${f(detail.max).padStart(7)} ms  (e.g. ${detail.last.data.status}, ${detail.last.data.steps.map((s: any) => `${s.nodeId}:${s.status}`).join(" → ")})`,
      );
      const list = await timed(
        server.url,
        () => "/api/workflows",
        (json, path) => {
          if (json.data.length !== workflows.length) throw new Error(`GET ${path}: ${json.data.length} workflows`);
        },
      );
      timings.push({ label: "GET /api/workflows", t: list });
      console.log(`${"GET /api/workflows".padEnd(64)} p50 ${f(list.p50).padStart(7)} ms  p95 ${f(list.p95).padStart(7)} ms  max ${f(list.max).padStart(7)} ms`);
      figures = {
        n,
        seedRunsPerSecond: seeded.runsPerSecond,
        bytesPerRun,
        tagBytesPerRun,
        healthzMs,
        webhookMs,
        firstListMs,
        timings,
        binaryEmptyMs,
        binaryWebhookMs: null,
      };
    } finally {
      await server.stop();
    }
    figures.binaryWebhookMs = await binaryStartMs(dataDir, hook.webhookPath!, database?.url);
    console.log(
      figures.binaryWebhookMs === null
        ? "compiled binary: not built (npm run build), its start is not measured"
        : `compiled binary: spawn → first webhook accepted (202) ${f(figures.binaryWebhookMs)} ms with ${thousands(n)} runs stored, ${f(binaryEmptyMs!)} ms with none`,
    );
    return figures;
  } finally {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const sizes = (process.env.WEFT_BENCH_HISTORY_SIZES ?? "100000,1000000")
    .split(",")
    .map((s) => Number(s.trim().replace(/_/g, "")))
    .filter((n) => Number.isInteger(n) && n > 0);
  exitUnlessPostgresInstalled("history.ts");
  console.log(
    `machine: ${machine()}; storage ${STORAGE}; sizes ${sizes.map(thousands).join(", ")}; ${WARMUP} warm-up + ${REQUESTS} measured requests per figure, sequential`,
  );
  const all: SizeFigures[] = [];
  try {
    for (const n of sizes) all.push(await measure(n));
  } finally {
    await stopPostgres();
  }

  console.log(`\nsummary (ms unless stated; p50 / p95)`);
  const header = ["", ...all.map((s) => `${thousands(s.n)} runs`)];
  const rows: string[][] = [
    ["seeding, runs/s", ...all.map((s) => thousands(Math.round(s.seedRunsPerSecond)))],
    [
      STORAGE === "postgres" ? "bytes per run (database; of it run_tags)" : "bytes per run (db + WAL; of it run_tags)",
      ...all.map((s) => `${s.bytesPerRun.toFixed(0)} (${s.tagBytesPerRun.toFixed(0)})`),
    ],
    ["spawn → GET /healthz", ...all.map((s) => f(s.healthzMs))],
    ["spawn → first webhook 202", ...all.map((s) => f(s.webhookMs))],
    [
      "binary: spawn → first webhook 202",
      ...all.map((s) => (s.binaryWebhookMs === null ? "not built" : `${f(s.binaryWebhookMs)} (0 runs: ${f(s.binaryEmptyMs!)})`)),
    ],
    ["first GET /api/runs", ...all.map((s) => f(s.firstListMs))],
    ...all[0]!.timings.map((t, i) => [t.label, ...all.map((s) => `${f(s.timings[i]!.t.p50)} / ${f(s.timings[i]!.t.p95)}`)]),
  ];
  const widths = header.map((_, c) => Math.max(header[c]!.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ");
  console.log(line(header));
  for (const row of rows) console.log(line(row));

  for (const s of all) {
    const where = `${thousands(s.n)} runs (${STORAGE})`;
    const slowest = s.timings.reduce((a, b) => (b.t.p95 > a.t.p95 ? b : a));
    reportGoal({
      figure: `slowest p95 of the list, run and workflow-list figures, ${where}`,
      value: `${f(slowest.t.p95)} ms (${slowest.label})`,
      goal: "< 20 ms",
      met: slowest.t.p95 < 20,
    });
    const untagged = s.bytesPerRun - s.tagBytesPerRun;
    reportGoal({
      figure: `bytes per run, ${where}, run_tags left out (the goal's history had no tags)`,
      value: `${untagged.toFixed(0)} (${s.bytesPerRun.toFixed(0)} with run_tags)`,
      goal: "≤ 500",
      met: untagged <= 500,
    });
    if (s.binaryWebhookMs !== null)
      reportGoal({
        figure: `compiled binary: spawn → first webhook, ${where}`,
        value: `${f(s.binaryWebhookMs)} ms`,
        goal: "< 200 ms",
        met: s.binaryWebhookMs < 200,
      });
  }
}
