import sqlite from "../../sqlite/migrations/007-run-list-indexes";

/** SQLite's 007-run-list-indexes.ts on PostgreSQL: the same statements (the rules in ./index.ts change none of them). */
export default {
  version: 7,
  name: "run-list-indexes",
  sql: sqlite.sql,
};
