/**
 * Worker-thread entry of the SQLite run writer (./run-writers.ts, ThreadWriter): owns one database connection
 * and commits each batch of run and step writes in one transaction, so SQLite work and fsync never block the
 * main thread. (On PostgreSQL the writer's client is asynchronous and commits from the main thread:
 * postgres/writer.ts.)
 */
import type { Db } from "../db";
import { packFinishedRuns, type WireOp } from "../run-writes";
import { openDatabase } from "./db";
import { truncateWal } from "./maintenance";
import { forgetWrites, RunStore } from "./run-store";
import { applyBatch, applyWireOp, WRITER_CACHE_KIB } from "./run-writers";

declare const self: Worker;

let db: Db | undefined;
let store: RunStore | undefined;
const apply = (op: WireOp) => applyWireOp(db!, store!, op);

self.onmessage = (event: MessageEvent) => {
  const message = JSON.parse(event.data as string) as
    | { t: "init"; dbPath: string; synchronous: "FULL" | "NORMAL" }
    | { t: "batch"; id: number; ops: WireOp[][] }
    | { t: "truncateWal"; id: number }
    | { t: "forget" };
  if (message.t === "init") {
    try {
      db = openDatabase(message.dbPath, { synchronous: message.synchronous, migrate: false, cacheKiB: WRITER_CACHE_KIB });
      // Every batch goes through applyBatch, which forgets what was remembered when a transaction fails.
      store = new RunStore(db, true);
      self.postMessage(JSON.stringify({ t: "ready" }));
    } catch (error) {
      self.postMessage(JSON.stringify({ t: "init-failed", error: String((error as Error)?.message ?? error) }));
    }
    return;
  }
  if (message.t === "forget") {
    // Another connection wrote meanwhile (the adaptive writer committed inline): what this one remembers may be gone.
    if (db) forgetWrites(db);
    return;
  }
  if (message.t === "truncateWal") {
    // Outside any transaction, after every batch sent before it (messages are handled in order).
    self.postMessage(JSON.stringify({ t: "truncated", id: message.id, ok: db ? truncateWal(db) : false }));
    return;
  }
  const failures = applyBatch(
    db!,
    message.ops.map((group) => packFinishedRuns(group)),
    apply,
  );
  self.postMessage(JSON.stringify({ t: "done", id: message.id, failures }));
};
