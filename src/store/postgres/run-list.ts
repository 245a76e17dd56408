/**
 * The run list on PostgreSQL (../sqlite/run-store.ts, RunStore.list, says how and why; docs/operations.md "Deep list
 * pages"): the exact total summed from run_counts, then the page found by walking an index in the list's own
 * order from the nearer end — run_hours' hour counts for time-sorted pages, run_durations' bucket counts and the
 * duration index for sort=duration, run_tag_hours' hour counts and run_tags for the tag filter (run_tag_durations' bucket
 * counts with sort=duration) — keys first, then those rows. The same algorithm as SQLite's,
 * written for PostgreSQL (positional parameters, no `+column` planner hints), each statement awaited.
 */
import { type BucketRow, bucketsThrough, type DurationWalk, durationPageTuning, durationWalks, taggedWalkRuns, walkRange } from "../run-duration-pages";
import { type CompactLayout, type Stored, statusName } from "../run-layout";
import { type HourCount, mergeHourCounts, type RunCountFilter, unsavedConditions } from "../run-read-repository";
import * as runRows from "../run-rows";
import type { PostgresConnection } from "./connection";
import type { RunRowReader, WithRecord } from "./run-records-read";

/** A condition of the filter: a column of runs (and of run_counts, run_hours) equal to a stored value. */
type Cell = readonly [column: string, value: number];

/** A statement's parameters, bound in order as the text is written (`$1…`). */
class Params {
  readonly values: unknown[] = [];
  bind(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** Cells bound once: each column with the placeholder of its value. */
type Bound = Array<readonly [column: string, placeholder: string]>;

const bindCells = (cells: readonly Cell[], params: Params): Bound => cells.map(([column, value]) => [column, params.bind(value)] as const);
/** The bound cells as conditions joined by AND, each column qualified by `alias` when given. */
const on = (cells: Bound, alias = "") => cells.map(([column, placeholder]) => `${alias ? `${alias}.` : ""}${column} = ${placeholder}`).join(" AND ");

type Page = { limit: number; offset: number; backwards: boolean };

/**
 * The kept counts per hour a list page's hours are found in, with the filter's conditions (`FROM` onwards, up to the
 * GROUP BY): every run's (run_hours), or, with `tag`, that tag's runs' (run_tag_hours, migration 027).
 */
const hourCounts = (cells: readonly Cell[], tag: string | undefined, params: Params) =>
  tag === undefined ? `run_hours WHERE ${on(bindCells(cells, params))}` : `run_tag_hours WHERE ${on(bindCells(cells, params))} AND tag = ${params.bind(tag)}`;

export class PostgresRunList {
  private readonly layout: CompactLayout;

  constructor(
    private readonly c: PostgresConnection,
    private readonly reader: RunRowReader,
  ) {
    this.layout = reader.layout;
  }

  async list(filter: runRows.RunListFilter): Promise<{ rows: runRows.RunRow[]; total: number }> {
    const cells = await this.cells(filter);
    if (!cells) return { rows: [], total: 0 };
    const counted = new Params();
    const total = await this.sum(
      `SELECT ${runRows.SUM_OF_N} FROM run_counts WHERE ${on(bindCells(cells, counted))} AND tag = ${counted.bind(filter.tag ?? "")}`,
      counted,
    );
    const end = Math.min(filter.offset + filter.limit, total);
    if (filter.offset >= end) return { rows: [], total };
    if (filter.tag !== undefined) return { rows: await this.taggedPage(filter, filter.tag, cells, total, end), total };
    if (filter.sort === "duration") return { rows: await this.durationPage(cells, runRows.nearerEnd(filter.offset, end, total)), total };
    const newest = filter.sort !== "oldest";
    const span = await this.hourSpan(cells, newest, filter.offset, end, total);
    const params = new Params();
    const where = [on(bindCells(this.rowCells(filter, cells), params)), `started_at >= ${params.bind(span.from)}`, `started_at < ${params.bind(span.to)}`];
    const order = this.layout.startOrder(newest ? "DESC" : "ASC");
    const sql = `SELECT ${runRows.LIST_COLUMNS} FROM runs WHERE seq IN (SELECT seq FROM runs WHERE ${where.join(" AND ")}
      ORDER BY ${order} LIMIT ${params.bind(filter.limit)} OFFSET ${params.bind(filter.offset - span.before)}) ORDER BY ${order}`;
    return { rows: await this.rows(sql, params), total };
  }

  /**
   * A page of sort=duration, `page` counted from the nearer end: the buckets of run_durations summed from that end up
   * to the page, then the duration index walked from the bucket holding its first run (../run-duration-pages.ts);
   * the index holds every filter column (migration 24), so no walk reads a run row.
   */
  private async durationPage(cells: Cell[], page: Page): Promise<runRows.RunRow[]> {
    const a = page.offset;
    const b = page.offset + page.limit - 1;
    let walks: DurationWalk[] | undefined;
    if (b >= durationPageTuning.plainWalkRuns) {
      const summed = new Params();
      const sql = bucketsThrough(on(bindCells(cells, summed)), summed.bind(a), summed.bind(b), !page.backwards);
      walks = durationWalks(await this.c.all<BucketRow>(sql, summed.values), a, b, page.backwards);
    }
    walks ??= [{ range: "all", ...page }];
    const order = this.layout.durationOrder;
    const params = new Params();
    const filter = on(bindCells(cells, params));
    const keys = walks.map((walk) => {
      const range = walkRange(walk, walk.value === undefined ? "" : `${params.bind(walk.value)}::bigint`);
      return `(SELECT seq FROM runs WHERE ${range ? `${filter} AND ${range}` : filter}
        ORDER BY ${walk.backwards ? runRows.reversedOrder(order) : order} LIMIT ${params.bind(walk.limit)} OFFSET ${params.bind(walk.offset)})`;
    });
    return this.rows(`SELECT ${runRows.LIST_COLUMNS} FROM runs WHERE seq IN (${keys.join(" UNION ALL ")}) ORDER BY ${order}`, params);
  }

  /** RunReadRepository.hourCounts: run_hours' sums (codes decoded) and run_unsaved's (text), merged. */
  async hourCounts(filter: RunCountFilter, fromHour: number): Promise<HourCount[]> {
    const cells = await this.cells(filter);
    let stored: Array<{ hour: number; status: string; n: number }> = [];
    if (cells) {
      const params = new Params();
      const where = `${on(bindCells(cells, params))} AND hour >= ${params.bind(fromHour)}`;
      const rows = await this.c.all<{ hour: number; status: number; n: number }>(
        `SELECT hour, status, ${runRows.SUM_OF_N} FROM run_hours WHERE ${where} GROUP BY hour, status`,
        params.values,
      );
      stored = rows.map((row) => ({ hour: Number(row.hour), status: statusName(row.status), n: Number(row.n) }));
    }
    const { where, params } = unsavedConditions(filter, "$");
    const unsaved = await this.c.all<{ hour: number; status: string; n: number }>(
      `SELECT hour, status, ${runRows.SUM_OF_N} FROM run_unsaved WHERE ${where.join(" AND ")} AND hour >= $${params.length + 1} GROUP BY hour, status`,
      [...params, fromHour],
    );
    return mergeHourCounts(stored, unsaved);
  }

  /**
   * The filter as cells, the workspace first; undefined when a name of the filter was never stored with a run
   * (nothing matches). The names' keys are read first (stored ones only: a reader stores none).
   */
  private async cells(filter: RunCountFilter): Promise<Cell[] | undefined> {
    const named = [filter.workspaceId, filter.triggerType, filter.workflowId].filter((name): name is string => name !== undefined);
    await this.reader.names.loadStored(named);
    const key = (name: string) => this.layout.find(name);
    const workspace = key(filter.workspaceId);
    if (workspace === undefined) return undefined;
    const cells: Cell[] = [["workspace_id", workspace]];
    if (filter.environments.length === 1) cells.push(["environment", this.layout.environment(filter.environments[0]!)]);
    if (filter.status) cells.push(["status", this.layout.status(filter.status)]);
    if (filter.triggerType) {
      const trigger = key(filter.triggerType);
      if (trigger === undefined) return undefined;
      cells.push(["trigger_type", trigger]);
    }
    if (filter.workflowId) {
      const workflow = key(filter.workflowId);
      if (workflow === undefined) return undefined;
      cells.push(["workflow_id", workflow]);
    }
    return cells;
  }

  /** The cells a list index answers alone: with a workflow, the workflow index's (without the workspace: RunStore.rowCells). */
  private rowCells(filter: runRows.RunListFilter, cells: Cell[]): Cell[] {
    return filter.workflowId ? cells.filter(([column]) => column !== "workspace_id") : cells;
  }

  private async sum(sql: string, params: Params): Promise<number> {
    return Number((await this.c.get<{ n: number }>(sql, params.values))?.n ?? 0);
  }

  private async rows(sql: string, params: Params): Promise<runRows.RunRow[]> {
    const rows = await this.c.all<runRows.RunRow & WithRecord>(sql, params.values);
    return (await this.reader.decodeAll(rows)) as runRows.RunRow[];
  }

  /** Positions [filter.offset, end) of the `total` runs carrying `tag` (RunStore.taggedPage says how). */
  private async taggedPage(filter: runRows.RunListFilter, tag: string, cells: Cell[], total: number, end: number): Promise<runRows.RunRow[]> {
    const newest = filter.sort !== "oldest";
    // Time-sorted: the hours holding the page, from run_tag_hours.
    const span = filter.sort === "duration" ? undefined : await this.hourSpan(cells, newest, filter.offset, end, total, tag);
    const params = new Params();
    const bound = bindCells(cells, params);
    const workspace = bound[0]![1];
    const tagged = params.bind(tag);
    if (!span) {
      const page = runRows.nearerEnd(filter.offset, end, total);
      const order = this.layout.durationOrder;
      const reversed = runRows.reversedOrder(order);
      // The runs the filter lists, tagged or not: a walk of the duration index reads listed / total of them per tagged run.
      const counted = new Params();
      const listed = await this.sum(`SELECT ${runRows.SUM_OF_N} FROM run_counts WHERE ${on(bindCells(cells, counted))} AND tag = ''`, counted);
      const walks = await this.taggedDurationWalks(cells, tag, page, listed / total);
      if (2 * taggedWalkRuns(walks) * listed < total * total) {
        const keys = walks.map((walk) => {
          const range = walkRange(walk, walk.value === undefined ? "" : `${params.bind(walk.value)}::bigint`, "r.");
          return `(SELECT r.seq FROM runs AS r WHERE ${on(bound, "r")}${range ? ` AND ${range}` : ""} AND (SELECT count(*) FROM run_tags AS t
              WHERE t.workspace_id = r.workspace_id AND t.tag = ${tagged} AND t.started_at = r.started_at AND t.run_id = r.id) = 1
            ORDER BY ${runRows.qualified("r", walk.backwards ? reversed : order)} LIMIT ${params.bind(walk.limit)} OFFSET ${params.bind(walk.offset)})`;
        });
        return this.rows(`SELECT ${runRows.LIST_COLUMNS} FROM runs WHERE seq IN (${keys.join(" UNION ALL ")}) ORDER BY ${order}`, params);
      }
      const sql = `SELECT ${runRows.LIST_COLUMNS} FROM runs WHERE seq IN (SELECT r.seq FROM run_tags AS t JOIN runs AS r ON r.id = t.run_id
          WHERE t.workspace_id = ${workspace} AND t.tag = ${tagged} AND ${on(bound, "r")}
          ORDER BY ${runRows.qualified("r", page.backwards ? reversed : order)} LIMIT ${params.bind(page.limit)} OFFSET ${params.bind(page.offset)})
        ORDER BY ${order}`;
      return this.rows(sql, params);
    }
    const direction = newest ? "DESC" : "ASC";
    // Only the workspace to match (every environment, no other filter): run_tags holds it.
    let matches = "";
    if (cells.length > 1) {
      const atStart = "FROM runs AS o WHERE o.workspace_id = t.workspace_id AND o.started_at = t.started_at";
      const byRow = `(SELECT count(*) FROM runs AS r WHERE r.id = t.run_id AND ${on(bound, "r")})`;
      // The workspace's list index holds every filter column but the workflow: one look at the start decides. With a
      // workflow, a second look finds the run in the workflow's list index.
      const rowCells = bound.filter(([column]) => column !== "workspace_id");
      matches = filter.workflowId
        ? ` AND CASE WHEN (SELECT count(*) ${atStart}) = 1
            THEN (SELECT count(*) FROM runs AS m WHERE ${on(rowCells, "m")} AND m.started_at = t.started_at) ELSE ${byRow} END = 1`
        : ` AND COALESCE((SELECT CASE WHEN count(*) = 1 THEN max(CASE WHEN ${on(bound, "o")} THEN 1 ELSE 0 END) END ${atStart}), ${byRow}) = 1`;
    }
    const within = `t.started_at >= ${params.bind(span.from)} AND t.started_at < ${params.bind(span.to)}`;
    const sql = `SELECT ${runRows.LIST_COLUMNS} FROM runs WHERE id IN (SELECT t.run_id FROM run_tags AS t
      WHERE t.workspace_id = ${workspace} AND t.tag = ${tagged} AND ${within}${matches}
      ORDER BY t.started_at ${direction}, t.run_id ${direction} LIMIT ${params.bind(filter.limit)} OFFSET ${params.bind(filter.offset - span.before)})
      ORDER BY started_at ${direction}, id ${direction}`;
    return this.rows(sql, params);
  }

  /** The walks of the duration index that read `page` of the runs carrying `tag` (RunStore.taggedDurationWalks says how). */
  private async taggedDurationWalks(cells: Cell[], tag: string, page: Page, spread: number): Promise<DurationWalk[]> {
    const a = page.offset;
    const b = page.offset + page.limit - 1;
    let walks: DurationWalk[] | undefined;
    if (b * spread >= durationPageTuning.plainWalkRuns) {
      const summed = new Params();
      const where = `${on(bindCells(cells, summed))} AND tag = ${summed.bind(tag)}`;
      const sql = bucketsThrough(where, summed.bind(a), summed.bind(b), !page.backwards, "run_tag_durations");
      walks = durationWalks(await this.c.all<BucketRow>(sql, summed.values), a, b, page.backwards);
    }
    return walks ?? [{ range: "all", ...page }];
  }

  /**
   * The hours (of `started_at`) holding positions [offset, end) of the list in its order, as bounds on
   * `started_at`, and how many listed runs come before the first of them (RunStore.hourSpan says how). With `tag`, the
   * hours of the runs carrying it (run_tag_hours).
   */
  private async hourSpan(
    cells: Cell[],
    newest: boolean,
    offset: number,
    end: number,
    total: number,
    tag?: string,
  ): Promise<{ from: Stored; to: Stored; before: number }> {
    const { forward, newestFirst, a, b } = runRows.hourWalk(newest, offset, end, total);
    const found =
      (await this.spanInFirstHours(cells, tag, newestFirst, a, b)) ?? runRows.spanThroughHours(await this.hoursThrough(cells, tag, newestFirst, a, b), b);
    return runRows.spanBounds(this.layout, found, { forward, newest, total });
  }

  /** The hours of positions a..b (counted from the walk's end) when all of them lie in the nearest FIRST_HOURS hours. */
  private async spanInFirstHours(
    cells: Cell[],
    tag: string | undefined,
    newestFirst: boolean,
    a: number,
    b: number,
  ): Promise<runRows.HourSpanEnds | undefined> {
    const params = new Params();
    const sql = `SELECT hour, ${runRows.SUM_OF_N} FROM ${hourCounts(cells, tag, params)} GROUP BY hour HAVING SUM(n) > 0
      ORDER BY hour ${newestFirst ? "DESC" : "ASC"} LIMIT ${params.bind(runRows.FIRST_HOURS)}`;
    const hours = await this.c.all<{ hour: number; n: number }>(sql, params.values);
    return runRows.spanInHours(hours, a, b);
  }

  /** The hours that hold positions a..b, each with its runs and the running total through it, in walking order. */
  private hoursThrough(
    cells: Cell[],
    tag: string | undefined,
    newestFirst: boolean,
    a: number,
    b: number,
  ): Promise<Array<{ hour: number; n: number; through: number }>> {
    const direction = newestFirst ? "DESC" : "ASC";
    const params = new Params();
    const sql = `SELECT hour, n, through FROM (
        SELECT hour, ${runRows.SUM_OF_N}, CAST(SUM(SUM(n)) OVER (ORDER BY hour ${direction}) AS BIGINT) AS through
        FROM ${hourCounts(cells, tag, params)} GROUP BY hour HAVING SUM(n) > 0
      ) AS hours WHERE through > ${params.bind(a)} AND through - n <= ${params.bind(b)} ORDER BY hour ${direction}`;
    return this.c.all(sql, params.values);
  }
}
