/**
 * PostgreSQL's migration 21 packs its run indexes and narrows two run columns (../../postgres/migrations/021-run-sizes.ts);
 * SQLite stores integers in as few bytes as they need and has no index fill factor. The version is kept in
 * step so both schemas have the same number.
 */
export default {
  version: 21,
  name: "run-sizes",
  note: "changes nothing on SQLite (PostgreSQL rewrites its runs once, with fuller index pages and narrower columns)",
  sql: "SELECT 1;",
};
