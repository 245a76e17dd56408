/**
 * A throwaway InfluxDB 1.x for tests: Debian's `influxdb` (influxd) with a config written to a temp dir —
 * the HTTP API and the RPC bind address on free 127.0.0.1 ports, meta, data and WAL in the temp dir,
 * reporting disabled, authentication on with an admin user made at start. Skip the suite when
 * `hasInfluxd()` is false.
 *   const influx = await startInfluxd(); ... await influx.stop();
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./server";

const BINARY = ["/usr/bin/influxd", "/usr/sbin/influxd"].find((path) => existsSync(path));
export const hasInfluxd = (): boolean => BINARY !== undefined;

export interface InfluxdHandle {
  url: string;
  user: string;
  password: string;
  /** The server's version, from its X-Influxdb-Version header. */
  version: string;
  /** Runs InfluxQL as the admin user and answers the JSON. */
  influxql(q: string, db?: string): Promise<any>;
  stop(): Promise<void>;
}

export async function startInfluxd(): Promise<InfluxdHandle> {
  if (!BINARY) throw new Error("influxd is not installed (Debian package influxdb)");
  const dir = mkdtempSync(join(tmpdir(), "weft-influx-"));
  const http = await freePort();
  let rpc = await freePort();
  while (rpc === http) rpc = await freePort();
  const conf = join(dir, "influxdb.conf");
  writeFileSync(
    conf,
    [
      "reporting-disabled = true",
      `bind-address = "127.0.0.1:${rpc}"`,
      "[meta]",
      `  dir = "${dir}/meta"`,
      "[data]",
      `  dir = "${dir}/data"`,
      `  wal-dir = "${dir}/wal"`,
      "  query-log-enabled = false",
      "[http]",
      `  bind-address = "127.0.0.1:${http}"`,
      "  auth-enabled = true",
      "  log-enabled = false",
      "[monitor]",
      "  store-enabled = false",
      "",
    ].join("\n"),
  );
  // Its log goes to a file: a pipe nobody reads would stall influxd once the pipe's buffer fills.
  const log = join(dir, "influxd.log");
  const proc = Bun.spawn([BINARY, "-config", conf], { stdout: "ignore", stderr: Bun.file(log) });
  const logTail = async () =>
    (
      await Bun.file(log)
        .text()
        .catch(() => "")
    ).slice(-2000);
  const url = `http://127.0.0.1:${http}`;
  const deadline = Date.now() + 15_000;
  let version = "";
  for (;;) {
    const ping = await fetch(`${url}/ping`).catch(() => null);
    // The answer counts only while our influxd runs: another server on the port would answer too.
    if (ping?.status === 204 && proc.exitCode === null) {
      version = ping.headers.get("x-influxdb-version") ?? "";
      break;
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`influxd did not start: ${await logTail()}`);
    }
    await Bun.sleep(100);
  }
  const user = "admin";
  const password = "weft-test-password";
  const authorization = `Basic ${btoa(`${user}:${password}`)}`;
  /** One InfluxQL statement; answers influxd's refusal (its text) or null when it was accepted. */
  const refusal = async (q: string, options: { admin?: boolean; db?: string } = {}) => {
    const res = await fetch(`${url}/query`, {
      method: "POST",
      headers: options.admin === false ? {} : { authorization },
      body: new URLSearchParams({ q, ...(options.db ? { db: options.db } : {}) }),
    });
    const text = await res.text();
    return res.ok && !text.includes('"error"') ? { text: null, answer: JSON.parse(text) } : { text, answer: null };
  };
  /** Tries `q` every 50 ms until influxd accepts it (or `alsoFine` says its refusal will do), at most 10 s. */
  const until = async (q: string, admin: boolean, alsoFine = (_text: string) => false) => {
    for (const started = Date.now(); ; await Bun.sleep(50)) {
      const { text } = await refusal(q, { admin });
      if (text === null || alsoFine(text)) return;
      if (Date.now() - started > 10_000) throw new Error(`influxd: ${q.split(" WITH PASSWORD")[0]} refused: ${text}\n${await logTail()}`);
    }
  };
  // With authentication on and no user yet, the first statement may create the admin user. influxd may answer it
  // before it is ready (the refusal in the answer's body), and may not yet see the user it made ("create admin user
  // first", seen once in a loaded suite): both are tried again until an authenticated statement is accepted.
  await until(`CREATE USER ${user} WITH PASSWORD '${password}' WITH ALL PRIVILEGES`, false, (text) => text.includes("user already exists"));
  await until("SHOW USERS", true);
  const influxql = async (q: string, db?: string) => {
    const { text, answer } = await refusal(q, { db });
    // A statement the admin runs to set a test up must not fail quietly: say what influxd answered.
    if (text !== null) throw new Error(`influxd refused ${q}: ${text}\n${await logTail()}`);
    return answer;
  };
  return {
    url,
    user,
    password,
    version,
    influxql,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
