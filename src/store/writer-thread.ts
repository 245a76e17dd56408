/**
 * Worker-thread entry of the run writer (./run-writes.ts): owns one database connection and commits each
 * batch of run and step writes in one transaction, so SQLite work and fsync (or PostgreSQL's round trips) never
 * block the main thread. On PostgreSQL a batch becomes a few multi-row statements (postgres/run-batches.ts).
 */
import { SQL } from "bun";
import { openDatabase, type Db } from "./db";
import { truncateWal } from "./maintenance";
import { PostgresRunBatches } from "./postgres/run-batches";
import { RunStore } from "./runs";
import { applyBatch, applyWireOp, type WireOp } from "./run-writes";

declare const self: Worker;

type Message = { t: "init"; dbPath: string; synchronous: "FULL" | "NORMAL" } | { t: "batch"; id: number; ops: WireOp[][] } | { t: "truncateWal"; id: number };

/** The connection: SQLite applies ops one by one, PostgreSQL a batch at a time. */
let sqlite: { db: Db; apply: (op: WireOp) => void } | undefined;
let postgres: PostgresRunBatches | undefined;
/** Messages are handled one after another, in the order they came (PostgreSQL's are asynchronous). */
let turn: Promise<void> = Promise.resolve();

const send = (message: object) => self.postMessage(JSON.stringify(message));

async function handle(message: Message): Promise<void> {
  if (message.t === "init") {
    try {
      if (/^postgres(?:ql)?:/.test(message.dbPath)) {
        // Its own connection; the main thread's opener applied the migrations.
        postgres = await PostgresRunBatches.open(new SQL(message.dbPath, { adapter: "postgres", max: 1, idleTimeout: 0 }));
      } else {
        // It only appends: the tail and inner pages of a few b-trees are all it rereads (a 16 MB cache only held
        // pages it had written, ~15 MB of the process's peak under load).
        const db = openDatabase(message.dbPath, { synchronous: message.synchronous, migrate: false, cacheKiB: 2_000 });
        const store = new RunStore(db);
        sqlite = { db, apply: (op) => applyWireOp(db, store, op) };
      }
      send({ t: "ready" });
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
    failures = postgres ? await postgres.apply(message.ops) : applyBatch(sqlite!.db, message.ops, sqlite!.apply);
  } catch (error) {
    failures = message.ops.map(() => String((error as Error)?.message ?? error));
  }
  send({ t: "done", id: message.id, failures });
  // After the answer: nobody waits for it.
  await postgres?.foldIfDue().catch((error) => send({ t: "error", error: `folding the run counts failed: ${String((error as Error)?.message ?? error)}` }));
}

self.onmessage = (event: MessageEvent) => {
  const message = JSON.parse(event.data as string) as Message;
  turn = turn.then(() => handle(message));
};
