/**
 * Where a page of sort=duration lies in the duration index, from the kept counts per duration bucket
 * (run_durations, migration 024), on both databases (sqlite/run-durations.ts and postgres/run-list.ts write and run
 * the statements). The list's order is longest first, equal durations by environment then seq (newest stored
 * first), runs without a duration last (RunLayout.durationOrder); a bucket holds the durations of two
 * significant digits (1200–1299 ms), its key the smallest of them, runs without a duration the smallest key.
 *
 * The buckets are summed from the nearer end of the list (nearerEnd) up to the page: the bucket holding the page's
 * first run and how many listed runs come before it. The index is then walked from that bucket's start (a range
 * on duration_ms, in the list's order or backwards), skipping only the page's predecessors in the same bucket.
 * Runs without a duration are a range of their own (IS NULL) that no other range reaches, so a page that holds
 * both is two walks. Every walk is exact: the runs before a bucket in the list are the runs of the other side
 * of a boundary of durations, which the counts count exactly. When the counts do not reach the page (they
 * disagree with the list, which triggers keep from happening) the list is walked from its nearer end as before.
 */

/** run_durations' bucket of runs without a duration (migration 024): the smallest key, as they are listed last. */
export const UNTIMED_BUCKET = -9_007_199_254_740_991;

export const durationPageTuning = {
  /**
   * A page whose walk from the nearer end passes at most this many listed runs is walked without summing the
   * buckets (the first and last pages: the sum reads every bucket row of the filter, ~1 ms at 8,000 rows). Tests
   * set it to 0 to sum the buckets for every page.
   */
  plainWalkRuns: 1_000,
};

/** A bucket overlapping the page, as bucketsThrough selects it (PostgreSQL's BIGINTs as text). */
export interface BucketRow {
  bucket: number | string;
  n: number | string;
  /** Runs listed in this bucket and every bucket before it, counted from the walk's end. */
  through: number | string;
  /** The previous bucket's key in the walk's order; null for the first. */
  prev: number | string | null;
}

/**
 * One walk of the duration index: `limit` runs after `offset`, in the list's order or `backwards`, within
 * `range`: every run ("all"), those without a duration ("untimed"), those with a duration below `value` ("below":
 * the buckets after the one of key `value`, in the list's order), those at or above it ("from": that bucket and
 * the longer ones), or every run with a duration ("timed").
 */
export interface DurationWalk {
  range: "all" | "untimed" | "timed" | "below" | "from";
  value?: number;
  backwards: boolean;
  limit: number;
  offset: number;
}

/**
 * The statement selecting the buckets that hold positions $a..$b of the list counted from one end (`longestFirst`:
 * the list's own end), each with its runs, the running total through it and the key before it, in that order.
 * `where`: the filter's conditions on the columns of `table` (run_durations, or run_tag_durations with the tag:
 * migration 027); `a`, `b`: their placeholders.
 */
export function bucketsThrough(where: string, a: string, b: string, longestFirst: boolean, table = "run_durations"): string {
  const direction = longestFirst ? "DESC" : "ASC";
  return `SELECT bucket, n, through, prev FROM (
      SELECT bucket, CAST(SUM(n) AS BIGINT) AS n, CAST(SUM(SUM(n)) OVER w AS BIGINT) AS through, LAG(bucket) OVER w AS prev
      FROM ${table} WHERE ${where} GROUP BY bucket HAVING SUM(n) > 0 WINDOW w AS (ORDER BY bucket ${direction})
    ) AS buckets WHERE through > ${a} AND through - n <= ${b} ORDER BY bucket ${direction}`;
}

/**
 * Positions [x, y] (inclusive) of the runs without a duration, counted in the list's order within them (`untimed`
 * of them), walked from the nearer end of that range.
 */
function untimedWalk(x: number, y: number, untimed: number): DurationWalk {
  const backwards = x > untimed - 1 - y;
  return { range: "untimed", backwards, limit: y - x + 1, offset: backwards ? untimed - 1 - y : x };
}

/**
 * The walks that read positions [a, b] (inclusive, counted from the walk's end: the list's own unless
 * `backwards`) given the buckets holding them (bucketsThrough, same direction); undefined when the counts do
 * not reach b.
 */
export function durationWalks(rows: BucketRow[], a: number, b: number, backwards: boolean): DurationWalk[] | undefined {
  const buckets = rows.map((row) => ({
    bucket: Number(row.bucket),
    n: Number(row.n),
    before: Number(row.through) - Number(row.n),
    prev: row.prev === null ? undefined : Number(row.prev),
  }));
  const last = buckets[buckets.length - 1];
  if (!last || last.before + last.n <= b || buckets[0]!.before > a) return undefined;
  const untimed = buckets.find((row) => row.bucket === UNTIMED_BUCKET);
  const timed = buckets.find((row) => row.bucket !== UNTIMED_BUCKET);
  const walks: DurationWalk[] = [];
  if (!backwards) {
    // Longest first: the runs without a duration, if the page reaches them, come last.
    const timedEnd = untimed ? Math.min(b, untimed.before - 1) : b;
    if (timed && timedEnd >= a) {
      const range = timed.prev === undefined ? { range: "timed" as const } : { range: "below" as const, value: timed.prev };
      walks.push({ ...range, backwards: false, limit: timedEnd - a + 1, offset: a - timed.before });
    }
    if (untimed) walks.push(untimedWalk(Math.max(a, untimed.before) - untimed.before, b - untimed.before, untimed.n));
    return walks;
  }
  // Shortest first: the runs without a duration, if the page reaches them, come first (the list's end).
  const untimedRuns = untimed?.n ?? 0;
  if (untimed && a < untimedRuns) {
    // Positions counted from the list's end, as positions in the list's order within the runs without a duration.
    walks.push(untimedWalk(untimedRuns - 1 - Math.min(b, untimedRuns - 1), untimedRuns - 1 - a, untimedRuns));
  }
  const timedStart = Math.max(a, untimedRuns);
  if (timed && b >= timedStart)
    walks.push({ range: "from", value: timed.bucket, backwards: true, limit: b - timedStart + 1, offset: timedStart - timed.before });
  return walks;
}

/** A walk's condition on duration_ms (`value`: its placeholder; `of`: the column's qualifier), or undefined for every run. */
export function walkRange(walk: DurationWalk, value: string, of = ""): string | undefined {
  switch (walk.range) {
    case "all":
      return undefined;
    case "untimed":
      return `${of}duration_ms IS NULL`;
    case "timed":
      return `${of}duration_ms IS NOT NULL`;
    case "below":
      return `${of}duration_ms < ${value}`;
    case "from":
      return `${of}duration_ms >= ${value}`;
  }
}

/**
 * How many tagged runs the walks of a tag page of sort=duration pass (each its offset and limit): a walk of the
 * duration index reads the row of listed / tagged runs per tagged run it passes (the tag is looked up by the run's
 * start and id), against one row per tagged run when every tagged run is read and sorted (RunStore.taggedPage).
 */
export const taggedWalkRuns = (walks: readonly DurationWalk[]) => walks.reduce((sum, walk) => sum + walk.offset + walk.limit, 0);
