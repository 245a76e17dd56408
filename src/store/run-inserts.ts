/**
 * Inserting a run as part of someone else's unit of work (./port.ts, `atomically`): a schedule's instant or a
 * poll's baseline commits together with the run it starts, or neither does. Runs started on their own (a
 * webhook, the Runs API) go to the group-committed run writer instead (./run-writer.ts). Implemented by
 * ./sqlite/run-inserts.ts and ./postgres/run-inserts.ts.
 */
import type { RunRow } from "./run-rows";

export interface RunInsertRepository {
  /** Stores the definition the run executes (once per hash) and the run's row. */
  insert(row: RunRow, definition: { hash: string; text: string }): Promise<void>;
}
