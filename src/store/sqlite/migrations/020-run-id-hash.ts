/**
 * PostgreSQL's migration 20 keeps run ids unique through a hash index (../../postgres/migrations/020-run-id-hash.ts); SQLite's
 * run ids keep their unique b-tree. The version is kept in step so both schemas have the same number.
 */
export default {
  version: 20,
  name: "run-id-hash",
  note: "changes nothing on SQLite (PostgreSQL's unique index of run ids becomes a smaller hash index)",
  sql: "SELECT 1;",
};
