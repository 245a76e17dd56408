/** As SQLite's 033: a provider's name unique in its org (later repeats renamed "name (id)"), sessions indexed by expiry. */
export default {
  version: 33,
  name: "sso-names",
  sql: `
UPDATE sso_providers AS later SET name = format('%s (%s)', later.name, later.id)
  FROM sso_providers AS older
  WHERE older.org_id = later.org_id AND older.name = later.name AND older.id < later.id;
CREATE UNIQUE INDEX sso_providers_name ON sso_providers (org_id, name);
CREATE INDEX sessions_expires ON sessions (expires_at);
`,
};
