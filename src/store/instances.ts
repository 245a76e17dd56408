/** The fleet's registry (migration 11): one row per running `weft serve` process, renewed by its heartbeat. */

export interface InstanceRow {
  id: string;
  hostname: string;
  pid: number;
  version: string;
  role: string;
  started_at: string;
  heartbeat_at: string;
  /** JSON: [{ id, version }] of the pieces this instance can run. */
  pieces: string;
}

/** The registry as the storage port (./port.ts) answers it; every method answers a promise. */
export interface InstanceRepository {
  /** Oldest first. */
  list(): Promise<InstanceRow[]>;
  /** Registers an instance; one already registered keeps its row, with this heartbeat and piece list. */
  put(row: InstanceRow): Promise<void>;
  /** Renews an instance's heartbeat; false when its row is gone (pruned by another instance). */
  beat(id: string, at: string): Promise<boolean>;
  delete(id: string): Promise<void>;
  /** Forgets instances silent since before `before` (ISO time). */
  deleteSilentSince(before: string): Promise<void>;
}
