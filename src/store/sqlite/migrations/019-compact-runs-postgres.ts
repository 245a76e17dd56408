/**
 * PostgreSQL's migration 19 stores runs as SQLite's migration 018 does (../../postgres/migrations/019-compact-runs-postgres.ts);
 * SQLite's runs are already stored so. The version is kept in step so both schemas have the same number.
 */
export default {
  version: 19,
  name: "compact-runs-postgres",
  note: "changes nothing on SQLite (PostgreSQL's runs are rewritten as SQLite's already are)",
  sql: "SELECT 1;",
};
