/**
 * A run writer for store tests: the store's own writer (src/store/run-writer.ts picks SQLite's or PostgreSQL's),
 * committing on the calling thread, whose failures fail the test.
 */
import type { Db } from "../../src/store/db";
import { openRunWriter } from "../../src/store/run-writer";
import type { RunWrites } from "../../src/store/run-writes";

export function inlineRunWriter(db: Db, pool = 2): RunWrites {
  return openRunWriter({
    db,
    dbPath: null,
    storeAddress: null,
    mode: "inline",
    synchronous: "NORMAL",
    pool,
    onError: (error) => {
      throw error;
    },
  });
}
