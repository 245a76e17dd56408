/** The single executable: built once, copied alone into an empty folder, started with a fresh data dir. */
import { describe, expect, test, beforeAll, afterAll } from "bun:test";
import { SQL } from "bun";
import { copyFileSync, mkdtempSync, chmodSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { FIXTURE, FIXTURE_ID, fixturePackage } from "../support/activepieces-fixture";
import { packTarball } from "../support/npm-registry";
import { sampleValue } from "../support/prometheus-text";
import { startServer, type ServerHandle } from "../support/server";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { freshPostgresDatabase } from "../support/postgres-storage";
import { RUNTIME_SETTINGS } from "../../src/runtime-tuning";
import { STATUS_CODES } from "../../src/store/run-layout";

announceMissingPostgres();

const ROOT = resolve(import.meta.dir, "../..");
let server: ServerHandle;
let binary: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-bin-"));
  const built = join(dir, "built");
  const result = Bun.spawnSync([process.execPath, "build.ts", join(built, "weft")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`build failed: ${result.stderr.toString()}`);
  const alone = mkdtempSync(join(tmpdir(), "weft-alone-"));
  binary = join(alone, "weft");
  copyFileSync(join(built, "weft"), binary);
  chmodSync(binary, 0o755);
  server = await startServer({ command: [binary, "serve"], cwd: alone });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe("compiled binary", () => {
  test("answers /healthz", async () => {
    const res = await server.fetch("/healthz", { token: null });
    expect(res.status).toBe(200);
    expect((await res.json()).data.status).toBe("ok");
  });

  test("answers /readyz, and /metrics in Prometheus' format with prom-client bundled inside", async () => {
    expect(await (await server.fetch("/readyz", { token: null })).json()).toMatchObject({ data: { status: "ready" } });
    const res = await server.fetch("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    expect(text).toContain("# TYPE weft_runs_finished_total counter");
    expect(sampleValue(text, "process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
    expect((await server.fetch("/metrics", { token: null })).status).toBe(401);
  });

  test("serves an authenticated API call", async () => {
    const res = await server.fetch("/api/auth/me");
    expect(res.status).toBe(200);
    expect((await res.json()).data.scopes).toContain("workflow:write");
    expect((await server.fetch("/api/auth/me", { token: null })).status).toBe(401);
  });

  test("serves the UI page from inside the binary", async () => {
    const res = await server.fetch("/", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("data-weft-ui");
  });

  test("serves the API reference page and its assets from inside the binary", async () => {
    const res = await server.fetch("/api/docs", { token: null });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('data-weft-ui="api-docs"');
    const assets = [...html.matchAll(/(?:src|href)="(\/api\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBe(2);
    for (const path of assets) expect((await server.fetch(path, { token: null })).status).toBe(200);
  });

  test("executes a published workflow on its embedded worker threads and pieces", async () => {
    await expectWorkflowRuns(server);
  });

  // The backup thread's entry (src/store/sqlite/backup.ts) must resolve inside the binary, as the engine's do.
  test("writes a backup on its embedded backup thread, and `weft backup --verify` accepts it", async () => {
    const res = await server.fetch("/api/backups", { method: "POST" });
    expect(res.status).toBe(201);
    const { name } = ((await res.json()) as { data: { name: string } }).data;
    const verify = Bun.spawnSync([binary, "backup", "--verify", join(server.dataDir, "backups", name)], { stdout: "pipe", stderr: "pipe" });
    expect({ exitCode: verify.exitCode, stderr: verify.stderr.toString() }).toEqual({ exitCode: 0, stderr: "" });
    expect(verify.stdout.toString()).toContain(name);
  });

  // Bun's SQL client and the reader threads' entries must resolve inside the binary too.
  test.skipIf(!postgresBinaries())("stores in PostgreSQL with WEFT_DATABASE_URL, and runs a workflow there", async () => {
    const { url } = await freshPostgresDatabase();
    const alone = mkdtempSync(join(tmpdir(), "weft-alone-pg-"));
    const onPostgres = await startServer({ command: [binary, "serve"], cwd: alone, env: { WEFT_DATABASE_URL: url } });
    try {
      const runId = await expectWorkflowRuns(onPostgres);
      const pg = new SQL(url, { adapter: "postgres", max: 1 });
      try {
        // The status as stored: its code (src/store/run-layout.ts).
        const [row] = await pg`SELECT status FROM runs WHERE id = ${runId}`;
        expect(row?.status).toBe(STATUS_CODES.completed);
      } finally {
        await pg.close();
      }
    } finally {
      await onPostgres.stop();
    }
  });

  test("restarted itself in place with the runtime tuned for a server (same pid, src/runtime-tuning.ts)", () => {
    const environ = readFileSync(`/proc/${server.proc.pid}/environ`, "utf8").split("\0");
    for (const [name, value] of Object.entries(RUNTIME_SETTINGS)) expect(environ).toContain(`${name}=${value}`);
  });

  test("prints only JSON log lines (no framework warnings from the bundled code)", () => {
    const lines = server.output().trim().split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  test("prints its version and help", () => {
    const version = Bun.spawnSync([binary, "version"]);
    // The version first, then the build: the commit and the target embedded by build.ts.
    expect(version.stdout.toString().trim()).toMatch(/^\d+\.\d+\.\d+ \(commit ([0-9a-f]+(-dirty)?|source), (linux|darwin|windows)-(x64|arm64)\)$/);
    const help = Bun.spawnSync([binary, "--help"]);
    expect(help.stdout.toString()).toContain("token create");
  });

  test("writes a systemd unit that runs this binary (weft service install)", () => {
    const unit = join(mkdtempSync(join(tmpdir(), "weft-bin-unit-")), "weft.service");
    const install = Bun.spawnSync([binary, "service", "install", "--path", unit], { stdout: "pipe", stderr: "pipe" });
    expect(install.exitCode).toBe(0);
    expect(readFileSync(unit, "utf8")).toContain(`\nExecStart=${binary} serve\n`);
  });

  test("installs an Activepieces piece from a tarball with no node or npm on PATH, and a workflow runs it", async () => {
    const tarball = await packTarball(await fixturePackage("1.0.0"));
    const home = mkdtempSync(join(tmpdir(), "weft-bin-pieces-"));
    const dataDir = join(home, "data");
    // A PATH with nothing on it: the binary is its own package manager and piece host.
    const emptyPath = mkdtempSync(join(tmpdir(), "weft-empty-path-"));
    const add = Bun.spawnSync([binary, "pieces", "add", tarball], {
      cwd: home,
      env: { PATH: emptyPath, WEFT_DATA_DIR: dataDir },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(add.stderr.toString()).toBe("");
    expect(add.exitCode).toBe(0);
    expect(add.stdout.toString()).toContain(`installed ${FIXTURE_ID}\t${FIXTURE}@1.0.0`);

    const alone = await startServer({ command: [binary, "serve"], cwd: home, dataDir, env: { PATH: emptyPath } });
    try {
      const post = (path: string, body: unknown) =>
        alone.fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const connection = await (await post("/api/connections", { pieceId: FIXTURE_ID, name: "fixture", values: { token: "good-token", region: "eu" } })).json();
      const definition = {
        schemaVersion: 2,
        trigger: {
          name: "trigger",
          type: "manual",
          config: {},
          nextAction: {
            name: "say",
            type: "PIECE",
            pieceId: FIXTURE_ID,
            actionId: "echo",
            connectionId: connection.data.id,
            config: { text: "from the binary" },
          },
        },
      };
      const workflow = await (await post("/api/workflows", { name: "ap in the binary", definition })).json();
      expect((await post(`/api/workflows/${workflow.data.id}/publish`, {})).status).toBe(200);
      const run = await (await post(`/api/workflows/${workflow.data.id}/run?environment=production&wait=20`, {})).json();
      expect(run.data.status).toBe("completed");
      expect(run.data.steps[0].outputData).toMatchObject({ text: "from the binary", region: "eu", version: "1.0.0" });
    } finally {
      await alone.stop();
    }
  }, 60_000);
});

/** Creates, publishes and runs a three-step workflow (its last step on a worker thread) on `target`; the run's id. */
async function expectWorkflowRuns(target: ServerHandle): Promise<string> {
  const definition = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "manual",
      config: {},
      nextAction: {
        name: "greet",
        type: "PIECE",
        pieceId: "data",
        actionId: "set_fields",
        config: { fields: { greeting: "hello {{trigger.body.name}}", doubled: "{{trigger.body.n * 2}}" } },
        nextAction: {
          name: "shout",
          type: "PIECE",
          pieceId: "text",
          actionId: "template",
          config: { template: "{{greet.output.greeting}}!" },
          // Not pure: runs on a worker thread, whose entry must resolve inside the binary.
          nextAction: {
            name: "remember",
            type: "PIECE",
            pieceId: "store",
            actionId: "put",
            config: { key: "last", value: "{{greet.output.doubled}}" },
            // User code runs in a sandbox child process: the binary re-executed as `weft __sandbox`.
            nextAction: {
              name: "compute",
              type: "PIECE",
              pieceId: "code",
              actionId: "run_code",
              config: { code: "return { tripled: input.n * 3 };", input: { n: "{{greet.output.doubled}}" } },
            },
          },
        },
      },
    },
  };
  const json = { "content-type": "application/json" };
  const created = await (
    await target.fetch("/api/workflows", { method: "POST", headers: json, body: JSON.stringify({ name: "in the binary", definition }) })
  ).json();
  const id = created.data.id;
  expect((await target.fetch(`/api/workflows/${id}/publish`, { method: "POST" })).status).toBe(200);
  const res = await target.fetch(`/api/workflows/${id}/run?environment=production&wait=20`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ name: "Ada", n: 21 }),
  });
  expect(res.status).toBe(200);
  const run = (await res.json()).data;
  expect(run.status).toBe("completed");
  const detail = (await (await target.fetch(`/api/runs/${run.id}`)).json()).data;
  const greet = detail.steps.find((s: any) => s.nodeId === "greet");
  expect(greet.outputData).toMatchObject({ greeting: "hello Ada", doubled: 42 });
  expect(detail.steps.find((s: any) => s.nodeId === "remember")).toMatchObject({ status: "completed", outputData: { key: "last", value: 42 } });
  expect(detail.steps.find((s: any) => s.nodeId === "compute")).toMatchObject({ status: "completed", outputData: { tripled: 126 } });
  return run.id as string;
}
