/**
 * A single sign-on provider's name is unique in its org (docs/teams.md, "Single sign-on"): instances started together
 * with the same WEFT_OIDC_PROVIDERS each wrote the provider they did not find yet, and the login page offered it twice.
 * Names already repeated keep their oldest row as it is; each later one (ids are time-ordered) gets its id after its
 * name, so nothing is dropped and every row stays reachable. Sessions get an index on their expiry, which the sweep of
 * expired sessions reads.
 */
export default {
  version: 33,
  name: "sso-names",
  sql: `
UPDATE sso_providers SET name = name || ' (' || id || ')'
  WHERE EXISTS (SELECT 1 FROM sso_providers AS older WHERE older.org_id = sso_providers.org_id AND older.name = sso_providers.name AND older.id < sso_providers.id);
CREATE UNIQUE INDEX sso_providers_name ON sso_providers(org_id, name);
CREATE INDEX sessions_expires ON sessions(expires_at);
`,
};
