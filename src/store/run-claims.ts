/**
 * A cluster's claims on runs (docs/scaling.md, src/engine/claims.ts): which instance holds each unfinished run.
 * What the storage port (./port.ts) answers about them; implemented by ./sqlite/run-claims.ts and
 * ./postgres/run-claims.ts. On SQLite one process holds every run, so only tests call these there.
 */
import type { RunRow } from "./run-rows";

/** How a paused run about to resume is taken: by its resume link's token hash (spent), or from its current owner. */
export type PausedGuard = { tokenHash: string } | { owner: string | null };

export interface RunClaimRepository {
  /** The instances holding unfinished runs, and whether some unfinished run is held by none. */
  unfinishedHolders(): Promise<{ owners: string[]; unowned: boolean }>;
  /**
   * Makes `me` the owner of up to `limit` unfinished runs held by `from` (null: by nobody), oldest id first,
   * leaving out the ids in `skip` and taking only ids above `after` when given; answers them. Two instances
   * claiming at once never take the same run.
   */
  claim(me: string, from: string | null, limit: number, skip?: readonly string[], after?: string): Promise<RunRow[]>;
  /** Gives back a run `me` claimed but cannot execute (it lacks a piece the run needs): nobody holds it again. */
  release(runId: string, me: string): Promise<void>;
  /** Makes `me` the owner of a paused run that is about to resume, once; false when another instance resumed it first. */
  takePaused(runId: string, me: string, guard: PausedGuard): Promise<boolean>;
  /** Makes `me` the owner of an unfinished run held by `from` (an instance that died); false when another took it first. */
  takeRun(runId: string, me: string, from: string | null): Promise<boolean>;
}
