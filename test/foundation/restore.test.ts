/**
 * `weft restore FILE`, `weft backup --verify FILE` and `weft migrate --dry-run` as an operator runs them, in real
 * processes (docs/operations.md, "Backup", "Restore" and "Upgrade").
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { migrations } from "../../src/store/sqlite/migrations";
import { startServer } from "../support/server";

const ROOT = resolve(import.meta.dir, "../..");
const weft = (args: string[], env: Record<string, string> = {}) => {
  const res = Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), ...args], {
    cwd: ROOT,
    env: { ...process.env, WEFT_LOG_LEVEL: "warn", ...env },
  });
  return { code: res.exitCode, out: res.stdout.toString(), err: res.stderr.toString() };
};
const latest = migrations.at(-1)!.version;
const workflowNames = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.query("SELECT name FROM workflows ORDER BY name").all() as { name: string }[]).map((row) => row.name);
  } finally {
    db.close();
  }
};

async function createWorkflow(server: Awaited<ReturnType<typeof startServer>>, name: string) {
  const res = await server.fetch("/api/workflows", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name }) });
  expect(res.status).toBe(201);
}

describe("weft backup --verify", () => {
  test("accepts a backup naming its schema version, leaving nothing beside it; refuses a file that is not SQLite, a database not of Weft's, a newer schema, missing tables and a log beside it", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "weft-verify-"));
    expect(weft(["migrate"], { WEFT_DATA_DIR: dataDir }).code).toBe(0);
    const good = join(dataDir, "good.db");
    expect(weft(["backup", good], { WEFT_DATA_DIR: dataDir }).code).toBe(0);
    const ok = weft(["backup", "--verify", good]);
    expect(ok.code).toBe(0);
    expect(ok.out).toStartWith(`${good}: integrity ok, schema version ${latest} (this weft: ${latest}), `);
    expect([...new Bun.Glob("good.db*").scanSync(dataDir)]).toEqual(["good.db"]);

    const junk = join(dataDir, "junk.db");
    writeFileSync(junk, "not a database at all, just some text long enough to look like a header".repeat(20));
    const foreign = join(dataDir, "foreign.db");
    const other = new Database(foreign);
    other.run("CREATE TABLE notes (body TEXT)");
    other.close();
    const newer = join(dataDir, "newer.db");
    copyFileSync(good, newer);
    const missing = join(dataDir, "missing.db");
    copyFileSync(good, missing);
    for (const [file, change] of [
      [newer, `PRAGMA user_version = ${latest + 1}`],
      [missing, "DROP TABLE workflow_versions"],
    ] as const) {
      const db = new Database(file);
      db.run(change);
      db.close();
    }
    const logged = join(dataDir, "logged.db");
    copyFileSync(good, logged);
    writeFileSync(`${logged}-wal`, "frames the file alone would miss");
    const refusals: Array<[string, string]> = [
      [junk, "it cannot be read as a SQLite database: file is not a database"],
      [foreign, "it is not a database of Weft's (schema version 0: no migration was ever applied to it)"],
      [newer, `its schema version ${latest + 1} is newer than this weft knows (${latest})`],
      [missing, `tables of Weft's schema version ${latest} are missing: workflow_versions`],
      [logged, `a write-ahead log lies beside it (${logged}-wal): it is a database in use, or was copied with its log`],
    ];
    for (const [file, reason] of refusals) {
      const res = weft(["backup", "--verify", file]);
      expect(res.code).toBe(2);
      expect(res.err).toContain(`weft: ${file} is not a backup this weft can restore: ${reason}`);
    }
  });
});

describe("weft restore", () => {
  test("refuses while a server holds the data directory; once it is stopped, puts the backup in place and keeps the current database aside", async () => {
    const server = await startServer();
    const backup = join(mkdtempSync(join(tmpdir(), "weft-restore-")), "before.db");
    try {
      await createWorkflow(server, "In the backup");
      expect(weft(["backup", backup], { WEFT_DATA_DIR: server.dataDir }).code).toBe(0);
      await createWorkflow(server, "Made after the backup");
      const refused = weft(["restore", backup], { WEFT_DATA_DIR: server.dataDir });
      expect(refused.code).toBe(2);
      expect(refused.err).toBe(
        `weft: a weft process (pid ${server.proc.pid}) is using the data directory ${server.dataDir}; stop it first (systemctl stop weft, or SIGTERM), then restore. Nothing was changed\n`,
      );
    } finally {
      await server.stop();
    }
    const database = join(server.dataDir, "weft.db");
    expect(workflowNames(database)).toEqual(["In the backup", "Made after the backup"]);

    const restored = weft(["restore", backup], { WEFT_DATA_DIR: server.dataDir });
    expect(restored.code).toBe(0);
    const aside = /kept as (\S+);/.exec(restored.out)?.[1];
    expect(restored.out).toStartWith(`restored ${backup} as ${database} (schema version ${latest})\n`);
    expect(aside).toStartWith(`${database}.before-restore-`);
    expect(restored.err).toContain("it must be the key file of the installation the backup was taken from");
    expect(workflowNames(database)).toEqual(["In the backup"]);
    expect(workflowNames(aside!)).toEqual(["In the backup", "Made after the backup"]);

    const again = await startServer({ dataDir: server.dataDir });
    try {
      const list = await again.fetch("/api/workflows");
      expect(list.status).toBe(200);
      expect((await list.json()).data.map((w: { name: string }) => w.name)).toEqual(["In the backup"]);
    } finally {
      await again.stop();
    }
  });

  test("a backup that fails its check changes nothing in the data directory", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "weft-restore-"));
    expect(weft(["migrate"], { WEFT_DATA_DIR: dataDir }).code).toBe(0);
    const database = join(dataDir, "weft.db");
    const bytes = readFileSync(database);
    const damaged = join(dataDir, "damaged.db");
    expect(weft(["backup", damaged], { WEFT_DATA_DIR: dataDir }).code).toBe(0);
    // A page in the middle overwritten: SQLite's integrity check finds it.
    const content = readFileSync(damaged);
    content.fill(0x5a, 4096 * 3, 4096 * 3 + 2048);
    writeFileSync(damaged, content);
    const res = weft(["restore", damaged], { WEFT_DATA_DIR: dataDir });
    expect(res.code).toBe(2);
    expect(res.err).toStartWith(`weft: ${damaged} cannot be restored, nothing was changed: `);
    expect(readFileSync(database).equals(bytes)).toBe(true);
    expect([...new Bun.Glob("weft.db*").scanSync(dataDir)].sort()).toEqual(["weft.db"]);
  });
});

describe("weft migrate --dry-run", () => {
  test("lists the pending migrations and where the copy will go, changing nothing", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "weft-dry-"));
    const path = join(dataDir, "weft.db");
    const db = new Database(path);
    const from = migrations.at(-3)!.version;
    for (const m of migrations.filter((m) => m.version <= from)) db.run(m.sql);
    db.run(`PRAGMA user_version = ${from}`);
    db.close();
    const bytes = readFileSync(path);
    const res = weft(["migrate", "--dry-run"], { WEFT_DATA_DIR: dataDir });
    expect(res.code).toBe(0);
    expect(res.out).toBe(
      [
        `the database ${path} is at schema version ${from}; weft migrate would apply 2 migration(s), up to schema version ${latest}:`,
        ...migrations.filter((m) => m.version > from).map((m) => `  ${m.version} ${m.name}${m.note ? `: ${m.note}` : ""}`),
        `before it, weft migrate (or the next start) copies the database to ${join(dataDir, "backups")}/`,
        "",
      ].join("\n"),
    );
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(weft(["migrate"], { WEFT_DATA_DIR: dataDir }).code).toBe(0);
    expect(weft(["migrate", "--dry-run"], { WEFT_DATA_DIR: dataDir }).out).toBe(
      `the database ${path} is up to date (schema version ${latest}); nothing to apply\n`,
    );
  });
});
