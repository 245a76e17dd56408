/**
 * Upgrades that cannot lose data (docs/operations.md, "Upgrade"): a database of the first schema, made by the
 * test from the migrations, upgrades to the current one with every row intact after a copy is written to
 * backups/; a migration made to fail half-way (an extra one passed in, a test hook) leaves the file byte for
 * byte as it was and says how to go back. The same on PostgreSQL: nothing of a failed upgrade stays.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MigrationFailedError, UpgradeBackupError } from "../../src/store/db";
import type { Migration } from "../../src/store/migration";
import { openDatabase, schemaVersion, upgradeBackupDir } from "../../src/store/sqlite/db";
import { migrations } from "../../src/store/sqlite/migrations";
import { migratePostgres, postgresSchemaVersion } from "../../src/store/postgres/db";
import { postgresMigrations } from "../../src/store/postgres/migrations";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { emptyPostgresDatabase } from "../support/postgres-storage";

const FIRST = migrations.filter((m) => m.version === 1);
const latest = migrations.at(-1)!.version;
/** Schema 1's tables, a few rows each, written as the first weft wrote them. */
const FIXTURE = `
INSERT INTO orgs VALUES ('org-1', 'Acme', '2026-01-01T00:00:00.000Z');
INSERT INTO workspaces VALUES ('ws-1', 'org-1', 'Default', '2026-01-01T00:00:00.000Z'), ('ws-2', 'org-1', 'Ops', '2026-01-02T00:00:00.000Z');
INSERT INTO users VALUES ('u-1', 'org-1', 'Ada@example.com', 'Ada', 'argon2id$hash', 'owner', 'ws-1', '2026-01-01T00:00:00.000Z'),
  ('u-2', 'org-1', 'bob@example.com', 'Bob', 'argon2id$hash2', 'member', 'ws-2', '2026-01-03T00:00:00.000Z');
INSERT INTO sessions VALUES ('sess-hash', 'u-1', 'ws-1', 'csrf', '2027-01-01T00:00:00.000Z', '2026-01-04T00:00:00.000Z');
INSERT INTO api_tokens VALUES ('t-1', 'org-1', 'ws-1', 'ci', 'weft_abcd', 'token-hash', 'run:read workflow:write', 'u-1', '2026-01-05T00:00:00.000Z', NULL, NULL),
  ('t-2', 'org-1', 'ws-2', 'old', 'weft_efgh', 'token-hash-2', 'all', NULL, '2026-01-05T00:00:00.000Z', '2026-01-06T00:00:00.000Z', '2026-01-07T00:00:00.000Z');
INSERT INTO idempotency_records VALUES ('t-1', 'key-1', 'fp', 'done', 201, '{"data":{}}', 1767225600000);
`;

type Rows = Record<string, unknown[]>;

/** Every row of every table the database has, in the columns it has now. */
function snapshot(db: Database): Rows {
  const tables = db.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
  return Object.fromEntries(tables.map(({ name }) => [name, db.query(`SELECT * FROM "${name}" ORDER BY rowid`).all()]));
}

/** The same tables and columns read from the upgraded database. */
function sameColumns(db: Database, before: Rows): Rows {
  return Object.fromEntries(
    Object.entries(before).map(([table, rows]) => {
      const columns = Object.keys((rows[0] as object) ?? {});
      return [table, db.query(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}" ORDER BY rowid`).all()];
    }),
  );
}

/** A database file of the first schema with the fixture's rows, closed (everything in the file itself). */
function firstSchemaFile(): { path: string; rows: Rows } {
  const path = join(mkdtempSync(join(tmpdir(), "weft-upgrade-")), "weft.db");
  const db = openDatabase(path, { migrations: FIRST });
  db.run(FIXTURE);
  const rows = snapshot(db);
  db.close();
  return { path, rows };
}

/** Half-way: it changes a table and adds one, then fails. */
const failing: Migration = {
  version: latest + 1,
  name: "made-to-fail",
  sql: `
CREATE TABLE half_done (a INTEGER);
UPDATE users SET name = 'changed';
DELETE FROM api_tokens;
INSERT INTO orgs (id, name, created_at) VALUES ('org-1', 'duplicate', 'now');`,
};

describe("upgrading SQLite", () => {
  test("a database of the first schema upgrades to the current one with every row intact, after a copy of it is written to backups/", () => {
    const { path, rows } = firstSchemaFile();
    expect(Object.values(rows).every((r) => r.length > 0)).toBe(true);
    const upgrades: Array<{ backup?: string; ms?: number }> = [];
    const db = openDatabase(path, { onUpgrade: (upgrade) => upgrades.push(upgrade) });
    expect(schemaVersion(db)).toBe(latest);
    expect(sameColumns(db, rows)).toEqual(rows);
    // A session opened before migration 31 gets an id to be listed and revoked by (docs/teams.md, "Sessions").
    expect(db.query("SELECT id FROM sessions").get()).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    });
    db.close();
    // Announced with the copy's path, which holds the first schema and the same rows.
    const backup = upgrades[0]!.backup!;
    expect(backup).toStartWith(join(upgradeBackupDir(path), `weft-schema-1-before-${latest}-`));
    expect(readdirSync(upgradeBackupDir(path))).toHaveLength(1);
    const copy = new Database(backup, { readonly: true });
    expect(schemaVersion(copy)).toBe(1);
    expect(snapshot(copy)).toEqual(rows);
    copy.close();
  });

  test("a migration made to fail half-way leaves the file byte for byte as it was, and the message says how to go back", () => {
    const { path, rows } = firstSchemaFile();
    const bytes = readFileSync(path);
    let refused: unknown;
    try {
      openDatabase(path, { migrations: [...migrations, failing] });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(MigrationFailedError);
    const message = (refused as Error).message;
    const [backup] = readdirSync(upgradeBackupDir(path));
    expect(message).toBe(
      `migration ${latest + 1} made-to-fail failed (UNIQUE constraint failed: orgs.id); nothing was changed: the database ${path} is still at schema version 1. To go back, run the previous weft (the one that wrote schema version 1) on it as it is; the copy written before the upgrade is ${join(upgradeBackupDir(path), backup!)}`,
    );
    // Every migration before the failing one was rolled back with it: the file is the one of schema 1.
    expect(readFileSync(path).equals(bytes)).toBe(true);
    const db = new Database(path, { readonly: true });
    expect(schemaVersion(db)).toBe(1);
    expect(snapshot(db)).toEqual(rows);
    db.close();
    // The shipped migrations still apply to it afterwards.
    const upgraded = openDatabase(path);
    expect(schemaVersion(upgraded)).toBe(latest);
    upgraded.close();
  });

  test("when the copy cannot be written nothing is upgraded, and the message says why", () => {
    const { path, rows } = firstSchemaFile();
    // backups/ cannot be made: a file of that name is in the way.
    writeFileSync(upgradeBackupDir(path), "in the way");
    expect(() => openDatabase(path)).toThrow(UpgradeBackupError);
    expect(() => openDatabase(path)).toThrow(
      `nothing was upgraded: the copy of the database written before an upgrade could not be written to ${upgradeBackupDir(path)} (`,
    );
    const db = new Database(path, { readonly: true });
    expect(schemaVersion(db)).toBe(1);
    expect(snapshot(db)).toEqual(rows);
    db.close();
  });

  test("a new database is created without a copy (there is nothing to keep)", () => {
    const path = join(mkdtempSync(join(tmpdir(), "weft-upgrade-")), "weft.db");
    openDatabase(path).close();
    expect(() => readdirSync(upgradeBackupDir(path))).toThrow();
  });
});

const pgBin = postgresBinaries();
announceMissingPostgres();
describe.skipIf(!pgBin)("upgrading PostgreSQL", () => {
  const clients: SQL[] = [];
  afterAll(async () => {
    for (const sql of clients) await sql.close();
  });
  const firstSchema = async () => {
    const url = await emptyPostgresDatabase();
    const sql = new SQL(url, { adapter: "postgres", max: 1 });
    clients.push(sql);
    expect(
      await migratePostgres(
        sql,
        undefined,
        postgresMigrations.filter((m) => m.version === 1),
      ),
    ).toEqual([1]);
    await sql.unsafe(FIXTURE);
    return { sql, url };
  };
  const tables = async (sql: SQL) =>
    ((await sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`) as { tablename: string }[]).map((r) => r.tablename);
  const identityRows = async (sql: SQL) => ({
    orgs: await sql`SELECT * FROM orgs ORDER BY id`,
    users: await sql`SELECT id, org_id, email, name, password_hash, role, default_workspace_id, created_at FROM users ORDER BY id`,
    tokens: await sql`SELECT id, name, prefix, token_hash, scopes, revoked_at FROM api_tokens ORDER BY id`,
  });

  test("a database of the first schema upgrades with every row intact; a migration made to fail half-way leaves every table and version as it was", async () => {
    const { sql } = await firstSchema();
    const before = await identityRows(sql);
    const shape = await tables(sql);
    const pgFailing = { ...failing, sql: failing.sql.replace("INTEGER", "integer") };
    let refused: unknown;
    await migratePostgres(sql, undefined, [...postgresMigrations, pgFailing]).catch((error) => (refused = error));
    expect(refused).toBeInstanceOf(MigrationFailedError);
    expect((refused as Error).message).toStartWith(`migration ${latest + 1} made-to-fail failed (`);
    expect((refused as Error).message).toContain(
      "nothing was changed: the PostgreSQL database is still at schema version 1. To go back, run the previous weft (the one that wrote schema version 1) on it as it is; a dump taken before the upgrade is restored with pg_restore",
    );
    expect(await postgresSchemaVersion(sql)).toBe(1);
    expect(await tables(sql)).toEqual(shape);
    expect(await identityRows(sql)).toEqual(before);
    expect(await migratePostgres(sql)).toEqual(postgresMigrations.filter((m) => m.version > 1).map((m) => m.version));
    expect(await identityRows(sql)).toEqual(before);
  });

  test("weft migrate --dry-run lists what is pending; weft migrate warns with the pg_dump command before upgrading, and every row is kept", async () => {
    const { sql, url } = await firstSchema();
    const before = await identityRows(sql);
    const weft = (args: string[]) => {
      const res = Bun.spawnSync([process.execPath, resolve(import.meta.dir, "../../src/main.ts"), ...args], {
        env: { ...process.env, WEFT_LOG_LEVEL: "warn", WEFT_DATABASE_URL: url, WEFT_DATA_DIR: mkdtempSync(join(tmpdir(), "weft-upgrade-")) },
      });
      return { code: res.exitCode, out: res.stdout.toString(), err: res.stderr.toString() };
    };
    const dry = weft(["migrate", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain(
      `is at schema version 1; weft migrate would apply ${postgresMigrations.length - 1} migration(s), up to schema version ${latest}:\n  2 workflows\n`,
    );
    expect(dry.out).toContain(
      'weft does not copy PostgreSQL first: take a dump before it (pg_dump --format=custom --file=weft-schema-1.dump "$WEFT_DATABASE_URL")',
    );
    expect(await postgresSchemaVersion(sql)).toBe(1);
    const upgraded = weft(["migrate"]);
    expect(upgraded.code).toBe(0);
    expect(upgraded.err).toContain(
      'weft: warning: PostgreSQL is not copied by weft before an upgrade: if you have no dump from before it, stop here and take one (pg_dump --format=custom --file=weft-schema-1.dump "$WEFT_DATABASE_URL"; docs/operations.md)',
    );
    expect(upgraded.out).toEndWith(`schema version ${latest}\n`);
    expect(await identityRows(sql)).toEqual(before);
    const [session] = await sql`SELECT id FROM sessions`;
    expect(session.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
