import { RUN_LIST_INDEXES } from "../../migration-sql";

/** The run list's indexes ascending, as SQLite's 007-run-list-indexes.ts: the same statements (../../migration-sql.ts). */
export default {
  version: 7,
  name: "run-list-indexes",
  sql: RUN_LIST_INDEXES,
};
