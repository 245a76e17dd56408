/**
 * Backups the server writes (docs/operations.md, "Scheduled backups"): POST /api/backups writes one now, GET lists
 * the folder; the newest WEFT_BACKUP_KEEP are kept, copies made before an upgrade never pruned; only the instance
 * owner; WEFT_BACKUP_SCHEDULE fires through croner; on PostgreSQL nothing is copied and the answer names pg_dump.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config";
import { Backups } from "../../src/core/backups";
import { AppError } from "../../src/http/errors";
import { newId } from "../../src/lib/ids";
import { checkBackup } from "../../src/store/sqlite/restore";
import { testApp, type TestApp } from "../support/app";
import { testStorage } from "../support/postgres-storage";
import { join as joinByInvitation } from "../teams/support";

const onSqlite = testStorage() === "sqlite";

/** A workspace admin who is not the instance owner, joined by invitation (docs/teams.md), with a browser session. */
async function memberSession(t: TestApp) {
  const email = `member-${newId().slice(0, 8)}@example.com`;
  const person = await joinByInvitation(t, email, "admin");
  return { token: null, email, headers: person.session };
}

describe.skipIf(!onSqlite)("backups on SQLite", () => {
  test("POST writes a backup that can be restored; GET lists it with the schedule, what is kept and where", async () => {
    const t = await testApp();
    await t.req("POST", "/api/workflows", { body: { name: "Kept" } });
    const made = await t.req("POST", "/api/backups");
    expect(made.status).toBe(201);
    expect(made.body.data).toEqual({
      name: expect.stringMatching(/^weft-\d{8}T\d{6}Z\.db$/),
      bytes: expect.any(Number),
      createdAt: expect.any(String),
      kind: "backup",
    });
    const dir = join(t.dataDir, "backups");
    const check = checkBackup(join(dir, made.body.data.name));
    expect(check.problems).toEqual([]);
    expect(check.bytes).toBe(made.body.data.bytes);
    const listed = await t.req("GET", "/api/backups");
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual({ available: true, schedule: null, next: null, keep: 7, dir, backups: [made.body.data] });
  });

  test("the newest WEFT_BACKUP_KEEP are kept; a copy written before an upgrade stays and is listed as such", async () => {
    const t = await testApp({ WEFT_BACKUP_KEEP: "2" });
    const dir = join(t.dataDir, "backups");
    mkdirSync(dir, { recursive: true });
    const upgrade = "weft-schema-23-before-24-20260101T000000Z.db";
    writeFileSync(join(dir, upgrade), "");
    writeFileSync(join(dir, "notes.txt"), "not a backup, left alone");
    const names: string[] = [];
    for (let i = 0; i < 3; i++) names.push((await t.deps.backups.scheduled())!.name);
    expect(new Set(names).size).toBe(3);
    expect(readdirSync(dir).sort()).toEqual([...names.slice(1), "notes.txt", upgrade].sort());
    const listed = (await t.req("GET", "/api/backups")).body.data.backups as Array<{ name: string; kind: string }>;
    expect(listed.map((b) => [b.name, b.kind]).sort()).toEqual([...names.slice(1).map((n) => [n, "backup"]), [upgrade, "before-upgrade"]].sort());
  });

  test("only the instance owner: a workspace admin who is not gets 403 saying why, and nothing is written", async () => {
    const t = await testApp();
    const member = await memberSession(t);
    for (const method of ["GET", "POST"]) {
      const res = await t.req(method, "/api/backups", member);
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain(`only the instance owner may ${method === "GET" ? "see" : "create"} backups; ${member.email} is member`);
    }
    expect(() => readdirSync(join(t.dataDir, "backups"))).toThrow();
  });

  test("WEFT_BACKUP_SCHEDULE writes backups on its schedule until the service stops", async () => {
    const t = await testApp({ WEFT_BACKUP_SCHEDULE: "* * * * * *" });
    const dir = join(t.dataDir, "backups");
    t.deps.backups.start();
    expect((await t.req("GET", "/api/backups")).body.data.next).toEqual(expect.any(String));
    try {
      for (let i = 0; i < 200 && (await t.req("GET", "/api/backups")).body.data.backups.length === 0; i++) await Bun.sleep(50);
    } finally {
      await t.deps.backups.stop();
    }
    const written = readdirSync(dir);
    expect(written.length).toBeGreaterThan(0);
    expect(checkBackup(join(dir, written[0]!)).problems).toEqual([]);
    expect(t.logLines.some((line) => line.includes("scheduled backup written"))).toBe(true);
  });
});

test("one backup at a time: asking while one is being written answers 409, and the next one after it is written", async () => {
  const t = await testApp();
  let finish = () => {};
  const writes: string[] = [];
  const backups = new Backups({
    schedule: undefined,
    keep: 3,
    dir: join(t.dataDir, "gated"),
    log: t.deps.log,
    identity: t.deps.identity,
    write: async (target) => {
      writes.push(target);
      await new Promise<void>((resolve) => (finish = resolve));
      writeFileSync(target, "copy");
      return { path: target, bytes: 4 };
    },
  });
  const owner = { userId: null } as Parameters<Backups["createFor"]>[0];
  const first = backups.createFor(owner);
  await Bun.sleep(0);
  expect(writes).toHaveLength(1);
  const second = await backups.createFor(owner).catch((error: unknown) => error);
  expect(second).toBeInstanceOf(AppError);
  expect((second as AppError).status).toBe(409);
  expect((second as AppError).message).toBe("a backup is being written; ask again once it is done (GET /api/backups lists it)");
  finish();
  expect((await first).bytes).toBe(4);
  const third = backups.createFor(owner);
  await Bun.sleep(0);
  finish();
  await third;
  expect(writes).toHaveLength(2);
  expect(backups.list()).toHaveLength(2);
});

describe.skipIf(onSqlite)("backups on PostgreSQL", () => {
  test("nothing is copied: POST answers 422 naming pg_dump, GET says backups are not available here", async () => {
    const t = await testApp();
    const res = await t.req("POST", "/api/backups");
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("back it up with pg_dump");
    expect((await t.req("GET", "/api/backups")).body.data).toMatchObject({ available: false, backups: [] });
  });
});

test("a WEFT_BACKUP_SCHEDULE that is not a cron pattern stops the start, naming the variable and an example", () => {
  expect(() => loadConfig({ WEFT_BACKUP_SCHEDULE: "every night" })).toThrow(ConfigError);
  expect(() => loadConfig({ WEFT_BACKUP_SCHEDULE: "every night" })).toThrow(
    /^WEFT_BACKUP_SCHEDULE="every night" is not a cron pattern \(.+\); use 5 or 6 fields/,
  );
  expect(loadConfig({ WEFT_BACKUP_SCHEDULE: "0 3 * * *", WEFT_DATA_DIR: "/srv/weft" }).backups).toEqual({
    schedule: "0 3 * * *",
    keep: 7,
    dir: "/srv/weft/backups",
  });
});
