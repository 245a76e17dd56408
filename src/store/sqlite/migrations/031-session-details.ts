/**
 * What a member sees of their sessions (docs/teams.md, "Sessions"): each session gets an id to name it by (the
 * table's key is the hash of the cookie, which is not shown), when it was last used (written at most once a
 * minute), and the address and browser it was last used from. Sessions opened before this migration get a
 * random id and no address or browser until their next use.
 */
export default {
  version: 31,
  name: "session-details",
  sql: `
ALTER TABLE sessions ADD COLUMN id TEXT;
ALTER TABLE sessions ADD COLUMN last_seen_at TEXT;
ALTER TABLE sessions ADD COLUMN user_agent TEXT;
ALTER TABLE sessions ADD COLUMN address TEXT;
UPDATE sessions SET id = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
  || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
CREATE UNIQUE INDEX sessions_id ON sessions(id);
CREATE INDEX sessions_user ON sessions(user_id);
`,
};
