/**
 * A throwaway PostgreSQL for tests: Debian's `postgresql` binaries, initdb into a temp dir (as the
 * `postgres` user when the tests run as root: initdb refuses root), listening on a free 127.0.0.1 port,
 * with a password user `weft`. Skip the suite when `postgresBinaries()` is undefined.
 *   const pg = await startPostgres(); ... await pg.stop();
 */
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseServer } from "./database-server";
import { freePort } from "./server";
import { announceOnce } from "./announce";

export type PostgresHandle = DatabaseServer;

/** The directory of initdb/pg_ctl (the newest installed major version), or undefined. */
export function postgresBinaries(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

/** Says once per test run that the PostgreSQL suites are skipped, however many files have one. */
export function announceMissingPostgres(): void {
  if (postgresBinaries()) return;
  announceOnce("postgresql", "PostgreSQL tests skipped (storage on PostgreSQL, the sql piece): install the Debian package postgresql");
}

function asPostgres(command: string[]): string[] {
  if (process.getuid?.() !== 0) return command;
  return ["runuser", "-u", "postgres", "--", ...command];
}

async function run(command: string[], what: string) {
  const proc = Bun.spawn(command, { stdout: "pipe", stderr: "pipe" });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${what} failed (${code}): ${await new Response(proc.stderr).text()}${await new Response(proc.stdout).text()}`);
}

/**
 * `settings` are server settings given after the tests' own and so winning over them, e.g. `{ fsync: "on" }`
 * for a benchmark that wants commits on disk as the SQLite default does (the tests run with fsync off).
 */
export async function startPostgres(options: { settings?: Record<string, string> } = {}): Promise<PostgresHandle> {
  const bin = postgresBinaries();
  if (!bin) throw new Error("PostgreSQL is not installed (Debian package postgresql)");
  const dir = mkdtempSync(join(tmpdir(), "weft-pg-"));
  const data = join(dir, "data");
  const password = "weft-test-password";
  const pwfile = join(dir, "pw");
  writeFileSync(pwfile, `${password}\n`);
  if (process.getuid?.() === 0) {
    const uid = Number((await Bun.$`id -u postgres`.text()).trim());
    const gid = Number((await Bun.$`id -g postgres`.text()).trim());
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
    // The per-run temp directory (test/support/preload.ts) is private to root: let postgres through it.
    // Bits added, never taken: a bench without the preload has /tmp itself here, which must stay 1777.
    chmodSync(tmpdir(), statSync(tmpdir()).mode | 0o755);
  }
  await run(asPostgres([join(bin, "initdb"), "-D", data, "-U", "weft", "--pwfile", pwfile, "-A", "scram-sha-256", "--no-sync", "-E", "UTF8"]), "initdb");
  const port = await freePort();
  const extra = Object.entries(options.settings ?? {})
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join("");
  await run(
    asPostgres([
      join(bin, "pg_ctl"),
      "-D",
      data,
      "-l",
      join(dir, "log"),
      "-w",
      "-t",
      "30",
      "-o",
      // The PostgreSQL pass keeps a few connections per test app until the run ends (test/support/postgres-storage.ts:
      // the bridge's, the writer's, the storage port's pool, whose idle ones close after a minute).
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=1000${extra}`,
      "start",
    ]),
    "pg_ctl start",
  );
  const url = `postgres://weft:${password}@127.0.0.1:${port}/postgres`;
  return {
    host: "127.0.0.1",
    port,
    user: "weft",
    password,
    database: "postgres",
    url,
    async stop() {
      await run(asPostgres([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]), "pg_ctl stop").catch(() => undefined);
    },
  };
}
