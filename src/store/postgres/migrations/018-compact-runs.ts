/**
 * SQLite's migration 018 (compact run rows) changes how SQLite stores runs; PostgreSQL keeps its columns'
 * text (../../run-layout.ts). The version is kept in step so both schemas have the same number.
 */
export default {
  version: 18,
  name: "compact-runs",
  sql: `SELECT 1;`,
};
