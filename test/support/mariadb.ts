/**
 * A throwaway MariaDB for tests: Debian's `mariadb-server`, a data dir made by mariadb-install-db in a temp
 * dir, listening on a free 127.0.0.1 port (and a socket in the same dir), with a password user `weft` and
 * a database `weft`. Skip the suite when `hasMariadb()` is false.
 *   const db = await startMariadb(); ... await db.stop();
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseServer } from "./database-server";
import { freePort } from "./server";
import { announceOnce } from "./announce";

export type MariadbHandle = DatabaseServer;

const SERVER = ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"].find((path) => existsSync(path));
const INSTALL = ["/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db"].find((path) => existsSync(path));
const CLIENT = ["/usr/bin/mariadb", "/usr/bin/mysql"].find((path) => existsSync(path));

export const hasMariadb = (): boolean => SERVER !== undefined && INSTALL !== undefined && CLIENT !== undefined;

/** Says once per test run that the MariaDB suites are skipped, however many files have one. */
export function announceMissingMariadb(): void {
  if (hasMariadb()) return;
  announceOnce("mariadb", "MariaDB tests skipped (sql piece, Activepieces piece-mysql): install the Debian package mariadb-server");
}

export async function startMariadb(): Promise<MariadbHandle> {
  if (!hasMariadb()) throw new Error("MariaDB is not installed (Debian package mariadb-server)");
  const dir = mkdtempSync(join(tmpdir(), "weft-maria-"));
  const data = join(dir, "data");
  const socket = join(dir, "sock");
  const user = process.getuid?.() === 0 ? ["--user=root"] : [];
  const install = Bun.spawn([INSTALL!, `--datadir=${data}`, "--auth-root-authentication-method=socket", "--skip-test-db", ...user], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if ((await install.exited) !== 0) throw new Error(`mariadb-install-db failed: ${await new Response(install.stderr).text()}`);
  const port = await freePort();
  const proc = Bun.spawn(
    [
      SERVER!,
      "--no-defaults",
      `--datadir=${data}`,
      `--socket=${socket}`,
      `--port=${port}`,
      "--bind-address=127.0.0.1",
      `--pid-file=${join(dir, "pid")}`,
      "--skip-log-bin",
      "--innodb-flush-log-at-trx-commit=0",
      ...user,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ping = Bun.spawnSync([CLIENT!, `--socket=${socket}`, "-uroot", "-e", "SELECT 1"], { stdout: "pipe", stderr: "pipe" });
    if (ping.exitCode === 0) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`mariadbd did not start: ${await new Response(proc.stderr).text()}`);
    }
    await Bun.sleep(100);
  }
  const password = "weft-test-password";
  const setup = Bun.spawnSync(
    [
      CLIENT!,
      `--socket=${socket}`,
      "-uroot",
      "-e",
      `CREATE DATABASE weft; CREATE USER 'weft'@'127.0.0.1' IDENTIFIED BY '${password}'; GRANT ALL ON weft.* TO 'weft'@'127.0.0.1'; FLUSH PRIVILEGES;`,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (setup.exitCode !== 0) throw new Error(`mariadb setup failed: ${setup.stderr.toString()}`);
  return {
    host: "127.0.0.1",
    port,
    user: "weft",
    password,
    database: "weft",
    url: `mysql://weft:${password}@127.0.0.1:${port}/weft`,
    async stop() {
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await proc.exited;
      clearTimeout(killer);
    },
  };
}
