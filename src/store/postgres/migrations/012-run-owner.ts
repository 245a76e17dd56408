/** SQLite's 012-run-owner.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 12,
  name: "run-owner",
  sql: `
ALTER TABLE runs ADD COLUMN owner TEXT COLLATE "C";
`,
};
