/**
 * A page of sort=duration on SQLite (RunStore.list): the buckets of run_durations summed from the nearer end of
 * the list, then the duration index walked from the bucket holding the page's first run (../run-duration-pages.ts
 * says how; migration 024). The index holds every filter column, so a walk reads no run row; the filter's
 * columns but the workspace are written `+column` so that the planner walks the index in the list's order
 * instead of sorting the runs of each duration again (a temporary b-tree per duration: 3× the walk).
 */
import type { Statement } from "bun:sqlite";
import { bindRow } from "./db";
import { bucketsThrough, type BucketRow, type DurationWalk, durationPageTuning, durationWalks, walkRange } from "../run-duration-pages";

export interface DurationPageQuery {
  /** A cached prepared statement of the list (RunStore.listStatement). */
  prepare(sql: string): Statement;
  /** The list view's columns (LIST_COLUMNS). */
  columns: string;
  /** The list's order (RunLayout.durationOrder) and the same read backwards. */
  order: string;
  reversed: string;
  /** The filter as conditions on the columns runs and run_durations share (`$name` parameters), the workspace first. */
  cells: { where: string[]; params: Record<string, unknown> };
  /** The page, counted from the nearer end of the list (nearerEnd). */
  page: { limit: number; offset: number; backwards: boolean };
}

/** The statement that reads the page's rows (in the list's order) and its parameters, bound. */
export function durationPage(query: DurationPageQuery): { sql: string; params: ReturnType<typeof bindRow> } {
  const { cells, page } = query;
  const a = page.offset;
  const b = page.offset + page.limit - 1;
  let walks: DurationWalk[] | undefined;
  if (b >= durationPageTuning.plainWalkRuns) {
    const sql = bucketsThrough(cells.where.join(" AND "), "$a", "$b", !page.backwards);
    walks = durationWalks(query.prepare(sql).all(bindRow({ ...cells.params, a, b })) as BucketRow[], a, b, page.backwards);
  }
  walks ??= [{ range: "all", ...page }];
  const filter = cells.where.map((c) => (c.startsWith("workspace_id ") ? c : `+${c}`));
  const params: Record<string, unknown> = { ...cells.params };
  const keys = walks.map((walk, i) => {
    const range = walkRange(walk, `$value${i}`);
    if (walk.value !== undefined) params[`value${i}`] = walk.value;
    params[`limit${i}`] = walk.limit;
    params[`offset${i}`] = walk.offset;
    const where = range ? [...filter, range] : filter;
    return `SELECT seq FROM (SELECT seq FROM runs WHERE ${where.join(" AND ")}
      ORDER BY ${walk.backwards ? query.reversed : query.order} LIMIT $limit${i} OFFSET $offset${i})`;
  });
  return { sql: `SELECT ${query.columns} FROM runs WHERE seq IN (${keys.join(" UNION ALL ")}) ORDER BY ${query.order}`, params: bindRow(params) };
}
