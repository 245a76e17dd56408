/** As SQLite's 031: a session's id, when it was last used, and the address and browser it was last used from. */
export default {
  version: 31,
  name: "session-details",
  sql: `
ALTER TABLE sessions ADD COLUMN id TEXT COLLATE "C";
ALTER TABLE sessions ADD COLUMN last_seen_at TEXT COLLATE "C";
ALTER TABLE sessions ADD COLUMN user_agent TEXT COLLATE "C";
ALTER TABLE sessions ADD COLUMN address TEXT COLLATE "C";
UPDATE sessions SET id = gen_random_uuid()::text;
CREATE UNIQUE INDEX sessions_id ON sessions(id);
CREATE INDEX sessions_user ON sessions(user_id);
`,
};
