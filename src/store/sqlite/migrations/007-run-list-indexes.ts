/**
 * The run list's two indexes, ascending instead of descending (same columns, same queries: SQLite walks an
 * index backwards for `ORDER BY started_at DESC, id DESC`).
 *
 * Why: a new run always has the newest started_at, so in a descending index it lands at the front of its
 * workspace's (workflow's) group; a full page there splits in the middle and leaves two half-empty pages.
 * Ascending, it lands at the end of its group, where SQLite's append split fills pages completely: each
 * index is about half as many pages (60,000 runs: 3,160 → 1,768 pages), so every run insert writes fewer
 * index pages into the WAL and the checkpointer copies fewer back.
 */
import { RUN_LIST_INDEXES } from "../../migration-sql";

export default {
  version: 7,
  name: "run-list-indexes",
  sql: RUN_LIST_INDEXES,
};
