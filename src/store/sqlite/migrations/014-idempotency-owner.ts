/**
 * The instance executing a request under an Idempotency-Key (its fleet id), while the claim runs: in a
 * cluster only the claims of instances that died are released. NULL alone on SQLite, and for claims made
 * before this migration (treated as abandoned in a cluster).
 */
export default {
  version: 14,
  name: "idempotency-owner",
  sql: `
ALTER TABLE idempotency_records ADD COLUMN owner TEXT;
`,
};
