/**
 * Worker-thread entry of the run writer (./run-writes.ts): owns the database connection(s) and commits each
 * batch of run and step writes in one transaction, so SQLite work and fsync (or PostgreSQL's round trips) never
 * block the main thread. On PostgreSQL a batch becomes a few multi-row statements (postgres/run-batches.ts),
 * and batches that do not depend on each other commit at once on two connections (postgres/writer-lanes.ts).
 */
import { openDatabase, type Db } from "./db";
import { truncateWal } from "./maintenance";
import { LANES, PostgresWriterLanes } from "./postgres/writer-lanes";
import { RunStore } from "./runs";
import { applyBatch, applyWireOp, type WireOp } from "./run-writes";

declare const self: Worker;

type Message = { t: "init"; dbPath: string; synchronous: "FULL" | "NORMAL" } | { t: "batch"; id: number; ops: WireOp[][] } | { t: "truncateWal"; id: number };

/** The connection: SQLite applies ops one by one, PostgreSQL a batch at a time on its lanes. */
let sqlite: { db: Db; apply: (op: WireOp) => void } | undefined;
let postgres: PostgresWriterLanes | undefined;
/** Messages are handled one after another, in the order they came (but PostgreSQL's batches: see below). */
let turn: Promise<void> = Promise.resolve();

const send = (message: object) => self.postMessage(JSON.stringify(message));

async function handle(message: Message): Promise<void> {
  if (message.t === "init") {
    try {
      if (/^postgres(?:ql)?:/.test(message.dbPath)) {
        // Connections of its own; the main thread's opener applied the migrations.
        postgres = await PostgresWriterLanes.open(message.dbPath);
      } else {
        // It only appends: the tail and inner pages of a few b-trees are all it rereads (a 16 MB cache only held
        // pages it had written, ~15 MB of the process's peak under load).
        const db = openDatabase(message.dbPath, { synchronous: message.synchronous, migrate: false, cacheKiB: 2_000 });
        const store = new RunStore(db);
        sqlite = { db, apply: (op) => applyWireOp(db, store, op) };
      }
      // On PostgreSQL the writer may hand over one batch per connection before the first is answered.
      send({ t: "ready", ...(postgres ? { flights: LANES } : {}) });
    } catch (error) {
      send({ t: "init-failed", error: String((error as Error)?.message ?? error) });
    }
    return;
  }
  if (message.t === "truncateWal") {
    // Outside any transaction, after every batch sent before it (messages are handled in order).
    send({ t: "truncated", id: message.id, ok: sqlite ? truncateWal(sqlite.db) : true });
    return;
  }
  let failures: Array<string | null>;
  try {
    failures = applyBatch(sqlite!.db, message.ops, sqlite!.apply);
  } catch (error) {
    failures = message.ops.map(() => String((error as Error)?.message ?? error));
  }
  send({ t: "done", id: message.id, failures });
}

/** A batch on PostgreSQL: started at once; the lanes make it wait for the earlier batches it depends on. */
async function commitOnLanes(lanes: PostgresWriterLanes, message: { id: number; ops: WireOp[][] }): Promise<void> {
  let failures: Array<string | null>;
  try {
    failures = await lanes.apply(message.ops);
  } catch (error) {
    failures = message.ops.map(() => String((error as Error)?.message ?? error));
  }
  send({ t: "done", id: message.id, failures });
  // After the answer: nobody waits for it.
  await lanes.foldIfDue().catch((error) => send({ t: "error", error: `folding the run counts failed: ${String((error as Error)?.message ?? error)}` }));
}

self.onmessage = (event: MessageEvent) => {
  const message = JSON.parse(event.data as string) as Message;
  // Batches come only once the thread answered "ready" to init.
  if (message.t === "batch" && postgres) void commitOnLanes(postgres, message);
  else turn = turn.then(() => handle(message));
};
