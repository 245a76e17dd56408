/**
 * Worker-thread entry of the WAL checkpointer (./run-writes.ts, InlineWriter): owns one connection and
 * copies committed WAL frames into the database file (PASSIVE checkpoints: it never blocks the writer),
 * so the page copying and the two fsyncs of each checkpoint happen off the main thread. The main thread
 * only finishes the last few frames when the WAL must restart (see InlineWriter.restartWal).
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

let db: Database | undefined;
let timer: ReturnType<typeof setInterval> | undefined;

function checkpoint() {
  try {
    const result = db?.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number } | undefined;
    // The writer learns how long the WAL is: past a limit it finishes a checkpoint so the WAL can restart.
    if (result) self.postMessage({ t: "frames", log: result.log });
  } catch {
    // Busy or locked: the next tick tries again.
  }
}

self.onmessage = (event: MessageEvent) => {
  const message = event.data as { t: "init"; dbPath: string; intervalMs: number } | { t: "stop" };
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
    timer = setInterval(checkpoint, message.intervalMs);
    self.postMessage({ t: "ready" });
  } catch (error) {
    self.postMessage({ t: "init-failed", error: String((error as Error)?.message ?? error) });
  }
};
