/**
 * Leases: a named piece of trigger work (a poll, a subscription, a webhook renewal) is done by the one instance
 * holding its lease until `expires_at` (ISO time). The holder renews it; once it lapses any instance may take it.
 * Instances sharing a PostgreSQL database use it; on SQLite the one process owns everything and it stays empty.
 */
export default {
  version: 13,
  name: "leases",
  sql: `
CREATE TABLE leases (
  name TEXT NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
`,
};
