/**
 * Worker-thread entry of a backup taken inside the server (scheduled, or asked for through the API;
 * ./backup.ts, backupOffThread): its own connection writes the copy with `VACUUM INTO`, so the minutes a large
 * database may take block neither the server's thread nor its writers. One backup per thread; it closes after.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

self.onmessage = (event: MessageEvent) => {
  const { dbPath, target } = event.data as { dbPath: string; target: string };
  let db: Database | undefined;
  try {
    db = new Database(dbPath);
    db.run("PRAGMA busy_timeout = 5000");
    db.run("VACUUM INTO ?", [target]);
    self.postMessage({ t: "done" });
  } catch (error) {
    self.postMessage({ t: "failed", error: String((error as Error)?.message ?? error) });
  } finally {
    db?.close();
  }
};
