/**
 * The instance-wide ranges allowed in Settings → Network (added to WEFT_ALLOW_CIDRS by src/core/network.ts):
 * the rows and what the storage port (./port.ts) answers about them.
 */
export interface AllowedRangeRow {
  cidr: string;
  added_by: string;
  added_at: string;
}

export interface NetworkRangeRepository {
  /** Oldest first. */
  list(): Promise<AllowedRangeRow[]>;
  insert(row: AllowedRangeRow): Promise<void>;
  delete(cidr: string): Promise<void>;
}
