/**
 * An installation from before members (migration 27, docs/teams.md) keeps working unchanged: its user becomes
 * owner of every workspace of the org, and their session and tokens keep every scope. The database is taken back
 * to the schema before it (the members tables dropped, the version unrecorded) and opened again, as an upgraded
 * server would open it.
 */
import { expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { SCOPES } from "../../src/schema/scopes";
import { createLogger } from "../../src/http/logger";
import { openPostgres } from "../../src/store/postgres/db";
import { migrations } from "../../src/store/sqlite/migrations";
import { testApp } from "../support/app";
import { appSql } from "../support/app-sql";
import { mint, setUpOwner } from "./support";

/** The migration that adds members (its number may change when branches are merged). */
const MEMBERS = migrations.find((m) => m.name === "members")!.version;

test("after the migration the existing user owns every workspace and keeps every scope", async () => {
  const t = await testApp();
  const owner = await setUpOwner(t);
  const token = (await mint(t, owner, ["workflow:read", "workflow:publish", "workspace:admin"])).body.data.token;
  const second = (await t.req("POST", "/api/workspaces", { body: { name: "second" } })).body.data.id;

  const sql = appSql(t);
  await sql.run("DROP TABLE invitations");
  await sql.run("DROP TABLE workspace_members");
  // The migrations after it go too (the audit log's, single sign-on's, the second factor's, the sessions' details and
  // git sync's, the unique provider names'), as they were not there before it either.
  await sql.run("DROP TABLE git_sync");
  await sql.run("DROP INDEX sessions_expires");
  await sql.run("DROP INDEX sessions_user");
  await sql.run("DROP INDEX sessions_id");
  for (const column of ["id", "last_seen_at", "user_agent", "address"]) await sql.run(`ALTER TABLE sessions DROP COLUMN ${column}`);
  for (const table of [
    "second_factor_requirements",
    "second_factor_logins",
    "recovery_codes",
    "second_factors",
    "audit_events",
    "sso_sessions",
    "sso_pending",
    "sso_links",
    "sso_providers",
  ])
    await sql.run(`DROP TABLE ${table}`);
  if (t.databaseUrl) await sql.run(`DELETE FROM weft_schema_migrations WHERE version >= ${MEMBERS}`);
  else await sql.run(`PRAGMA user_version = ${MEMBERS - 1}`);

  // The upgraded server migrates as it opens the store: SQLite's openDatabase does itself, PostgreSQL's at start-up.
  if (t.databaseUrl) await (await openPostgres(t.databaseUrl, { max: 1 })).close();
  const upgraded = createApp({ config: t.config, db: t.reopen(), log: createLogger("error", () => {}) });
  const call = async (path: string, headers: Record<string, string>) => {
    const res = await upgraded.app.handle(new Request(`http://localhost${path}`, { headers }));
    return { status: res.status, body: await res.json() };
  };
  const me = await call("/api/auth/me", owner.session);
  expect(me.status).toBe(200);
  expect(me.body.data.role).toBe("owner");
  expect(me.body.data.scopes.sort()).toEqual([...SCOPES].sort());
  expect(me.body.data.memberships.map((m: any) => m.role)).toEqual(["owner", "owner"]);
  expect(me.body.data.memberships.map((m: any) => m.workspaceId)).toContain(second);
  const viaToken = await call("/api/auth/me", { authorization: `Bearer ${token}` });
  expect(viaToken.body.data.scopes.sort()).toEqual(["workflow:publish", "workflow:read", "workspace:admin"]);
  expect((await call("/api/members", { authorization: `Bearer ${token}` })).body.data).toEqual([
    expect.objectContaining({ userId: owner.userId, role: "owner", status: "active" }),
  ]);
});
