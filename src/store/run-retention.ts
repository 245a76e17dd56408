/**
 * What run retention (src/engine/retention.ts) asks of the store about runs, as the storage port (./port.ts)
 * answers it: which runs each workflow has, which finished runs are oldest, where the unfinished runs stand, and
 * the SQLite file's free pages. Implemented by ./sqlite/run-retention.ts (the RunStore's retention statements,
 * in-process) and ./postgres/run-retention.ts (its own statements, every one awaited: a sweep over a large
 * history never holds the thread that serves requests).
 *
 * The deletions themselves go through the run writer (./run-writes.ts: ops deleteRuns, pruneDefinitions,
 * returnFreePages), on both databases: ordered there with the run inserts, and the writer forgets the
 * definitions it remembers having stored when it prunes them (a definition deleted by retention is written
 * again by the next run that uses it).
 */
import type { RunPosition } from "./run-rows";

/** How many runs a workflow has (every environment, status and trigger type), from the kept counts. */
export interface WorkflowRunCount {
  workspaceId: string;
  workflowId: string;
  runs: number;
}

/** Where an unfinished run stands in start order, with its workflow and workspace. */
export type UnfinishedPosition = RunPosition & { workflowId: string; workspaceId: string };

export interface RunRetentionRepository {
  /** Each workflow with runs, with how many (workflows with none are left out). */
  runCountsByWorkflow(): Promise<WorkflowRunCount[]>;
  /**
   * A workflow's oldest finished runs, started before `beforeIso` when given, oldest first, after `after` when
   * given, at most `limit`.
   */
  oldestFinishedOf(workflowId: string, limit: number, beforeIso?: string, after?: RunPosition): Promise<RunPosition[]>;
  /** A workspace's oldest finished runs, leaving out the runs of `exceptWorkflows`, oldest first, after `after` when given. */
  oldestFinishedIn(workspaceId: string, exceptWorkflows: string[], limit: number, after?: RunPosition): Promise<RunPosition[]>;
  /** Where each unfinished run stands (the cost follows the unfinished runs, not the history). */
  unfinishedPositions(): Promise<UnfinishedPosition[]>;
  /**
   * Pages of the database file that are free and can be given back to the file system (0 where the database
   * returns space on its own, or outside incremental auto-vacuum mode).
   */
  freePages(): Promise<number>;
  /**
   * Makes the database give freed space back by itself once (SQLite: incremental auto-vacuum, which needs a
   * VACUUM); changes nothing and answers `enabled` false when it is larger than `maxBytes`, with its size and
   * a `hint`: what an operator runs, during maintenance, to let it shrink.
   */
  ensureIncrementalVacuum(maxBytes: number): Promise<{ enabled: boolean; bytes: number; hint?: string }>;
}
