/** SQLite's 014-idempotency-owner.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 14,
  name: "idempotency-owner",
  sql: `
ALTER TABLE idempotency_records ADD COLUMN owner TEXT COLLATE "C";
`,
};
