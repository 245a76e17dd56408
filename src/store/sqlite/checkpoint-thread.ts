/**
 * Worker-thread entry of the WAL checkpointer (./run-writers.ts, InlineWriter): owns one connection and
 * copies committed WAL frames into the database file (PASSIVE checkpoints: it never blocks the writer),
 * so the page copying and the two fsyncs of each checkpoint happen off the main thread, including the one
 * that lets the WAL restart: the writer pauses its commits and asks for it (`finish`, InlineWriter.restartWal).
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

let db: Database | undefined;
let timer: ReturnType<typeof setInterval> | undefined;

/**
 * Copies what it can. Caught up or not, commits made while it copied leave frames behind: the WAL restarts
 * only when a commit finds every frame copied, so its length is reported whatever the result.
 */
function checkpoint(): number | undefined {
  try {
    return (db?.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { log: number } | undefined)?.log;
  } catch {
    // Busy or locked: the next tick tries again.
    return undefined;
  }
}

function tick() {
  const log = checkpoint();
  // The writer learns how long the WAL is: past a limit it pauses its commits and asks for a `finish`.
  if (log !== undefined) self.postMessage({ t: "frames", log });
}

self.onmessage = (event: MessageEvent) => {
  const message = event.data as { t: "init"; dbPath: string; intervalMs: number } | { t: "stop" } | { t: "finish" };
  if (message.t === "finish") {
    // No commit runs meanwhile: this one leaves nothing behind unless a reader's snapshot needs old frames.
    checkpoint();
    self.postMessage({ t: "finished" });
    return;
  }
  if (message.t === "stop") {
    if (timer) clearInterval(timer);
    db?.close();
    db = undefined;
    return;
  }
  try {
    db = new Database(message.dbPath);
    db.run("PRAGMA busy_timeout = 0");
    // This connection writes nothing; it must not start checkpoints of its own when it reads.
    db.run("PRAGMA wal_autocheckpoint = 0");
    timer = setInterval(tick, message.intervalMs);
    self.postMessage({ t: "ready" });
  } catch (error) {
    self.postMessage({ t: "init-failed", error: String((error as Error)?.message ?? error) });
  }
};
