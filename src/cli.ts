/**
 * CLI entry: `weft serve` (default), `weft token create`, `weft migrate [--dry-run | --from DIR --to URL]`, `weft backup [--verify]`,
 * `weft restore`, `weft export`, `weft import`, `weft mcp`, `weft version`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { parseArgs } from "node:util";
import { type App, VERSION, createApp } from "./app";
import { ConfigError, loadConfig, type Config } from "./config";
import { keyringOptions, rotateKeys } from "./core/connections/key-rotation";
import { Identity } from "./core/identity";
import { checkClusterKey, KeyMismatchError } from "./core/key-check";
import { secretBox } from "./core/crypto";
import { PieceLoadError } from "./pieces-runtime/loader";
import { loadRegistry } from "./pieces-runtime/registry";
import { commandOf } from "./runtime-tuning";
import { createLogger, type Logger } from "./http/logger";
import { describeBuild } from "./lib/build-info";
import { selfCommand } from "./lib/self-command";
import { systemdUnit, UNIT_DEFAULTS } from "./lib/systemd-unit";
import { CopyRefusedError, copySqliteToPostgres, describeDatabaseUrl } from "./store/copy-to-postgres";
import { acquireDataDirLock, DataDirLockedError, type DataDirLock } from "./store/data-dir-lock";
import { type Db, MigrationFailedError, NewerSchemaError, UpgradeBackupError, type UpgradeListener } from "./store/db";
import { AppError } from "./http/errors";
import type { ImportResult } from "./core/workflows/files";
import type { ForeignImportInput, Transfer } from "./core/workflows/transfer";
import { backupStore, checkBackupFile, migrateStore, openStore, pendingMigrations, restoreStore, sharedStore, type StoreLocation } from "./store/open";
import { storageOf } from "./store/storage";

const HELP = `weft ${VERSION} — self-hosted workflow automation

Usage:
  weft [serve] [--role all|api|worker]
                                     start the server (default); in a cluster on PostgreSQL, api
                                     takes requests and leaves runs to workers, worker executes runs
                                     and serves only /healthz, /readyz and /metrics (docs/scaling.md)
  weft token create --name N --scopes a,b|all [--workspace W]
                                     mint an API token and print it once
  weft migrate [--dry-run]           apply database migrations and exit (a SQLite database is first
                                     copied to DATA_DIR/backups/); --dry-run lists the pending ones
  weft migrate --from DIR --to postgres://USER:PASSWORD@HOST:5432/DB [--force]
                                     copy the SQLite database of data directory DIR into PostgreSQL,
                                     verify the row counts and exit; --force replaces what the target
                                     holds (docs/scaling.md)
  weft backup FILE                   write a consistent copy of the database to FILE (safe while the
                                     server runs; docs/operations.md)
  weft backup --verify FILE          check that FILE is a backup this weft can restore
  weft restore FILE                  put the backup FILE in place of the database (server stopped; the
                                     current database is kept aside as weft.db.before-restore-TIME)
  weft export DIR                    write every workflow of the workspace into DIR as YAML files
                                     (docs/workflows-as-code.md); replaces DIR's workflows/,
                                     variables/ and connections.yaml, leaves the rest
  weft import DIR [--dry-run] [--prune]
                                     read such a folder back: every file checked first, then all of it
                                     applied or nothing; --dry-run prints the plan and changes nothing,
                                     --prune also deletes workflows DIR does not hold. Both talk to the
                                     running server when one answers (WEFT_URL or WEFT_HOST:WEFT_PORT,
                                     as WEFT_TOKEN), else open the data directory themselves
  weft import FILE --from n8n|activepieces [--dry-run]
                                     import a workflow of n8n or Activepieces as a draft and print
                                     what was mapped, approximated or not mapped (docs/import.md)
  weft keys rotate                   re-encrypt every stored secret under a new key (stop the server
                                     first; see docs/connections.md)
  weft pieces add NAME[@VERSION]|FILE.tgz
                                     install an Activepieces piece package (docs/activepieces.md)
  weft pieces list | upgrade ID | remove ID [--version V]
                                     list, upgrade or remove installed piece packages
  weft mcp                           serve the MCP tools over stdio for a desktop agent, acting as
                                     the API token in WEFT_TOKEN; relays to WEFT_URL (or a server
                                     running at WEFT_HOST:WEFT_PORT) when there is one (docs/mcp.md)
  weft service install [--path FILE] [--user NAME] [--data-dir DIR] [--env-file FILE] [--force]
                                     write a hardened systemd unit that runs this executable (default
                                     /etc/systemd/system/weft.service) and print the steps left to do;
                                     it does not call systemctl (docs/install.md)
  weft version                       print the version, the commit and the target it was built for
  weft --help                        this text

Environment (all optional): WEFT_HOST (127.0.0.1), WEFT_PORT (8080), WEFT_DATA_DIR (./weft-data),
WEFT_PUBLIC_URL, WEFT_ENCRYPTION_KEY, WEFT_BOOTSTRAP_TOKEN, WEFT_WORKERS, WEFT_LOG_LEVEL,
WEFT_DB_SYNCHRONOUS (FULL|NORMAL), WEFT_BODY_LIMIT, WEFT_RATE_LIMIT, WEFT_RATE_BURST, WEFT_FLOOD_LIMIT,
WEFT_OAUTH_APPS, WEFT_ENCRYPTION_KEY_PREVIOUS, WEFT_NPM_REGISTRY, WEFT_DATABASE_URL (postgres://…).
See docs/configuration.md.`;

export const databasePath = (config: Config) => join(config.dataDir, "weft.db");
const storeLocation = (config: Config): StoreLocation => ({
  databaseUrl: config.databaseUrl,
  sqlitePath: databasePath(config),
  synchronous: config.dbSynchronous,
});

/**
 * Logs an upgrade of the database's schema as it starts and when it is done: on SQLite with the copy written
 * before it, on PostgreSQL with a warning naming the command that takes one (docs/operations.md, "Upgrade").
 */
const logUpgrade =
  (log: Logger, config: Config): UpgradeListener =>
  ({ from, to, migrations, notes, backup, ms }) => {
    if (ms !== undefined) return log.info("database upgraded", { from, to, ms });
    log.info("upgrading the database; nothing answers until it is done", { from, to, migrations, notes, ...(backup ? { backup } : {}) });
    if (!backup && config.databaseUrl) log.warn(postgresBackupWarning(from));
  };

const pgDumpCommand = (from: number) => `pg_dump --format=custom --file=weft-schema-${from}.dump "$WEFT_DATABASE_URL"`;
const postgresBackupWarning = (from: number) =>
  `PostgreSQL is not copied by weft before an upgrade: if you have no dump from before it, stop here and take one (${pgDumpCommand(from)}; docs/operations.md)`;

function fail(message: string): never {
  process.stderr.write(`weft: ${message}\n`);
  process.exit(2);
}

/**
 * The configured store; a PostgreSQL that cannot be used stops the command naming it (without its password).
 * `log`: an upgrade of the database's schema is logged before and after (some take minutes on a large history).
 */
async function openConfiguredStore(config: Config, log?: Logger) {
  try {
    return await openStore(storeLocation(config), { onUpgrade: log && logUpgrade(log, config) });
  } catch (error) {
    if (error instanceof NewerSchemaError || error instanceof MigrationFailedError || error instanceof UpgradeBackupError) fail(error.message);
    if (!config.databaseUrl) throw error;
    const reason = String((error as Error)?.message ?? error).replace(/ \(in: [^)]*\)$/, "");
    fail(
      `cannot use the database WEFT_DATABASE_URL names (${describeDatabaseUrl(config.databaseUrl)}): ${reason}; check that PostgreSQL listens there, that the user and password are right and that the database exists (createdb)`,
    );
  }
}

/**
 * On a shared database (a cluster): stops start-up before the app is built — so before the instance registers,
 * writes or takes any work — unless it encrypts with the key the cluster's secrets use (src/core/key-check.ts).
 * Alone on SQLite nothing is checked.
 */
async function checkEncryptionKey(config: Config, db: Db) {
  if (!sharedStore(db)) return;
  try {
    await checkClusterKey(storageOf(db, { pool: config.databasePool }), secretBox(keyringOptions(config)), config);
  } catch (error) {
    if (!(error instanceof KeyMismatchError)) throw error;
    db.close();
    fail(error.message);
  }
}

/** Takes the data directory for this process, or stops with the pid that holds it (src/store/data-dir-lock.ts). */
function lockDataDir(dataDir: string, waitMs = 0): DataDirLock {
  try {
    const lock = acquireDataDirLock(dataDir, { waitMs });
    process.on("exit", () => lock.release());
    return lock;
  } catch (error) {
    if (error instanceof DataDirLockedError) fail(error.message);
    throw error;
  }
}

/**
 * Refuses a port another process listens on. Elysia asks the runtime for SO_REUSEPORT, with which a second
 * server on the same port starts and takes half the connections: Weft listens without it, and checks first,
 * before recovering any run, so a start that cannot serve changes nothing.
 */
function checkPortFree(config: Config) {
  try {
    const probe = Bun.serve({ hostname: config.host, port: config.port, reusePort: false, fetch: () => new Response(null, { status: 503 }) });
    probe.stop(true);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "EADDRINUSE" || /in use/i.test(String((error as Error).message))
        ? "is already in use by another program (another weft?)"
        : `cannot be listened on: ${(error as Error).message}`;
    fail(`port ${config.port} on ${config.host} ${reason}; stop that program or set WEFT_PORT to a free port`);
  }
}

let workerServer: ReturnType<typeof Bun.serve> | undefined;

/**
 * `--role worker`: executes runs and answers only GET /healthz, /readyz (for a load balancer or an orchestrator's
 * probe) and /metrics (the runs and steps it executes); every other request is refused in the usual envelope,
 * naming the instances to send it to.
 */
function listenAsWorker(config: Config, app: App) {
  workerServer = Bun.serve({
    hostname: config.host,
    port: config.port,
    reusePort: false,
    fetch(request) {
      const path = new URL(request.url).pathname;
      // The app answers these as on any instance; it reads callers' addresses from this server (WEFT_METRICS_ALLOW_CIDRS).
      if ((path === "/readyz" || path === "/metrics") && request.method === "GET") return app.handle(request);
      if (path === "/healthz" && (request.method === "GET" || request.method === "HEAD")) return app.handle(request);
      return Response.json(
        {
          error: {
            code: "SERVICE_UNAVAILABLE",
            message:
              "this instance is a worker (WEFT_ROLE=worker): it executes runs and serves only GET /healthz, /readyz and /metrics; send API calls, webhooks and the UI to an instance whose role is api or all",
          },
        },
        { status: 503 },
      );
    },
  });
  app.server = workerServer;
}

export async function serve(config: Config) {
  const lock = lockDataDir(config.dataDir);
  if (config.port !== 0) checkPortFree(config);
  const log = createLogger(config.logLevel);
  // Pieces load before the database opens: a broken user piece stops start-up with its file and reason.
  const pieces = await loadRegistry(config).catch((error) => {
    if (error instanceof PieceLoadError) fail(`pieces: ${error.message}`);
    throw error;
  });
  const db = await openConfiguredStore(config, log);
  await checkEncryptionKey(config, db);
  const { app, deps } = createApp({ config, db, log, pieces });
  // Instances of a cluster starting together each try this: one creates the org and token, the others find them.
  if (config.bootstrapToken && (await deps.identity.bootstrap(config.bootstrapToken))) {
    log.info("bootstrap token created", { workspace: (await deps.identity.ensureOrg()).workspaceId });
  }
  // Steps start running below: the ranges an owner allowed in Settings → Network are in force first.
  await deps.network.loaded;
  // The fleet registry: this instance's row and heartbeat (GET /api/fleet). First: in a cluster an instance is
  // alive before it owns a run, so no other instance takes one of its runs for a dead one's.
  await deps.fleet.start();
  // Runs left unfinished by the last process (in a cluster: by instances that died) are recovered before anything new is accepted.
  await deps.engine.start();
  // In a cluster, a change of a shared setting made on another instance (Settings → Network, a revoked token, a
  // workflow published, unpublished or rotated) is put in force here too. Not awaited: what is in force was read
  // as the app was built, and once the bus listens it is read again, so a change committed meanwhile is not
  // missed; waiting for the bus's connection held the start ~30 ms.
  void deps.clusterChanges.start();
  // Schedules and polls start once the engine can take runs; missed schedule instants fire now, once. A
  // worker leaves them to the instances that take requests.
  if (config.role !== "worker") await deps.triggers.start();
  // Scheduled backups (WEFT_BACKUP_SCHEDULE) of the SQLite database; on PostgreSQL it logs that pg_dump does them.
  deps.backups.start();
  // Scheduled git pulls of workspaces that have one (docs/workflows-as-code.md, "Environments").
  if (config.role !== "worker")
    void deps.gitSync.start().catch((error) => log.warn("git pull schedules did not start", { error: String(error?.message ?? error) }));
  // Audit events past WEFT_AUDIT_RETENTION_DAYS go at the run retention's interval (docs/teams.md, "Audit log").
  deps.audit.start(config.runRetentionIntervalSeconds * 1000, (error) => log.warn("pruning the audit log failed", { error: error.message }));
  // Expired sessions go at the same interval, a bounded batch each time (docs/teams.md, "Sessions").
  deps.identity.startSweep(config.runRetentionIntervalSeconds * 1000, (error) => log.warn("deleting expired sessions failed", { error: error.message }));
  // Weft refuses oversized bodies itself (413 in the envelope, src/http/body.ts); Bun's own cap would answer without one.
  if (config.role === "worker") listenAsWorker(config, app);
  else app.listen({ hostname: config.host, port: config.port, maxRequestBodySize: Number.MAX_SAFE_INTEGER, reusePort: false });
  const server = workerServer ?? app.server!;
  log.info("weft listening", { url: `http://${server.hostname}:${server.port}`, publicUrl: config.publicUrl, version: VERSION, dataDir: config.dataDir });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    deps.engine.closeStreams(); // open run streams would hold the server open
    await server.stop(false); // stop accepting, let in-flight requests finish
    await deps.triggers.stop(); // no new schedule or poll runs; an in-flight poll finishes and commits
    await deps.backups.stop(); // a backup being written is finished
    deps.gitSync.stop();
    deps.audit.stop();
    deps.identity.stopSweep();
    await deps.engine.stop(); // executing runs get a grace period; every queued write is committed
    await deps.tracing?.shutdown().catch(() => {}); // the last spans, best effort
    await deps.logStream.close(); // the last events, within a few seconds
    deps.piecePackages.stop();
    await deps.clusterChanges.stop();
    await deps.fleet.stop(); // leaves the registry
    db.close();
    lock.release();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  return { app, server, db };
}

/**
 * `weft mcp`: the MCP tools on stdin/stdout, logs on stderr. Relays to a running server (WEFT_URL, or one
 * answering at WEFT_HOST:WEFT_PORT) so two processes never execute one data directory's runs; else opens
 * the data directory itself and executes the runs the agent starts (schedules and webhooks need `serve`).
 */
async function mcp(config: Config) {
  // Loaded here, not at the top: the MCP SDK is heavy and `weft serve` loads it only on the first /mcp call.
  const { serveMcpStdio, tokenPrincipal } = await import("./mcp/stdio");
  const { bridgeMcpStdio, runningServer } = await import("./mcp/stdio-bridge");
  const token = process.env.WEFT_TOKEN;
  if (!token) fail("WEFT_TOKEN is not set; set it to an API token of the workspace the agent may use (weft token create --name agent --scopes all)");
  const url = process.env.WEFT_URL || (await runningServer(config));
  if (url) {
    if (!/^https?:\/\//.test(url)) fail(`WEFT_URL="${url}" is not an http(s) URL; use e.g. https://weft.example.com`);
    process.stderr.write(`weft mcp: relaying to ${url}/mcp\n`);
    await bridgeMcpStdio(url, token);
    process.exit(0);
  }
  // This process executes runs itself, so it takes the data directory as `weft serve` does; an agent
  // restarting its MCP server may start the new process while the old one is still closing.
  lockDataDir(config.dataDir, 5_000);
  // stdout carries JSON-RPC, so every log line goes to stderr.
  const log = createLogger(config.logLevel, (line) => process.stderr.write(`${line}\n`));
  const pieces = await loadRegistry(config).catch((error) => {
    if (error instanceof PieceLoadError) fail(`pieces: ${error.message}`);
    throw error;
  });
  const db = await openConfiguredStore(config);
  await checkEncryptionKey(config, db);
  const { deps } = createApp({ config, db, log, pieces });
  if (config.bootstrapToken) await deps.identity.bootstrap(config.bootstrapToken);
  const auth = await deps.identity.authenticateToken(token);
  if (!auth) fail(`WEFT_TOKEN is not a valid API token for the database in ${config.dataDir} (unknown or revoked); mint one with weft token create`);
  await deps.engine.start();
  await serveMcpStdio(deps, tokenPrincipal(deps, token), VERSION);
  await deps.engine.stop();
  db.close();
  process.exit(0);
}

/**
 * `weft pieces add|list|upgrade|remove`: installed piece packages in the data directory, with the checks the
 * API makes (a version a published workflow runs is not removed). A running server sees the change at its
 * next start; use the API or Settings → Integrations to change a running server without a restart.
 */
async function piecesCommand(config: Config, args: string[]) {
  const usage = "usage: weft pieces add NAME[@VERSION]|FILE.tgz | list | upgrade PIECE_ID | remove PIECE_ID [--version V]";
  const { values, positionals } = parseArgs({ args, options: { version: { type: "string" } }, allowPositionals: true });
  const [action, given] = positionals;
  if (!action || (action !== "list" && !given)) fail(usage);
  const target = given ?? "";
  const db = await openConfiguredStore(config);
  const log = createLogger("error", (line) => process.stderr.write(`${line}\n`));
  const { deps } = createApp({ config, db, log, pieces: await loadRegistry(config) });
  const row = (pkg: { pieceId: string; name: string; version: string; actions: number; triggers: number; authKind: string | null }) =>
    `${pkg.pieceId}\t${pkg.name}@${pkg.version}\t${pkg.actions} actions, ${pkg.triggers} triggers\tauth ${pkg.authKind ?? "none"}`;
  try {
    if (action === "list") {
      const list = deps.piecePackages.list();
      console.log(list.length ? list.map(row).join("\n") : "no piece packages installed; weft pieces add @activepieces/piece-<name>");
    } else if (action === "add") console.log(`installed ${row(await deps.piecePackages.add(target))}`);
    else if (action === "upgrade") console.log(`installed ${row(await deps.piecePackages.upgrade(target))}`);
    else if (action === "remove") for (const pkg of await deps.piecePackages.remove(target, values.version)) console.log(`removed ${row(pkg)}`);
    else fail(usage);
  } catch (error) {
    fail((error as Error).message);
  } finally {
    deps.piecePackages.stop();
    db.close();
  }
}

/** What `weft export` and `weft import` call: the running server's API, or this process's own app on the data directory. */
interface FilesBackend {
  exportFiles(): Promise<Record<string, string>>;
  importFiles(files: Record<string, string>, options: { dryRun: boolean; prune: boolean }): Promise<ImportResult>;
  /** A workflow of Activepieces or n8n (docs/import.md). */
  importForeign(body: ForeignImportInput): Promise<Awaited<ReturnType<Transfer["importForeign"]>>>;
  close(): void;
}

/** A problem-carrying refusal, as the API's envelope or core's AppError carries it. */
class FilesRefused extends Error {
  constructor(
    message: string,
    readonly problems: Array<{ file: string; path: string; message: string }>,
  ) {
    super(message);
  }
}

/**
 * The running server when one answers (so its caches, triggers and cluster see the change), as WEFT_TOKEN; else the
 * data directory, locked for this process as `weft serve` would lock it, in the first workspace.
 */
async function filesBackend(config: Config): Promise<FilesBackend> {
  const url = process.env.WEFT_URL || (await (await import("./mcp/stdio-bridge")).runningServer(config));
  if (url) {
    const token = process.env.WEFT_TOKEN;
    if (!token) fail(`a server answers at ${url}: set WEFT_TOKEN to an API token with workflow:read (export) or workflow:write (import)`);
    const call = async (method: string, body?: unknown, path = "/api/workflows/files") => {
      const res = await fetch(`${url.replace(/\/+$/, "")}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const answer = (await res.json().catch(() => null)) as { data?: any; error?: { message: string; details?: { problems?: any[] } } } | null;
      if (!res.ok || !answer?.data) throw new FilesRefused(answer?.error?.message ?? `${url} answered ${res.status}`, answer?.error?.details?.problems ?? []);
      return answer.data;
    };
    return {
      exportFiles: async () => (await call("GET")).files,
      importFiles: (files, options) => call("POST", { files, ...options }),
      importForeign: (body) => call("POST", body, "/api/workflows/import/foreign"),
      close() {},
    };
  }
  const lock = lockDataDir(config.dataDir);
  const log = createLogger("error", (line) => process.stderr.write(`${line}\n`));
  const db = await openConfiguredStore(config);
  await checkEncryptionKey(config, db);
  const { deps } = createApp({ config, db, log, pieces: await loadRegistry(config) });
  const { orgId, workspaceId } = await deps.identity.ensureOrg();
  const actor = { orgId, workspaceId, userId: null, credentialId: "weft import" };
  const refused = (error: unknown): never => {
    if (error instanceof AppError) throw new FilesRefused(error.message, (error.details as { problems?: any[] } | undefined)?.problems ?? []);
    throw error;
  };
  return {
    exportFiles: () => deps.workflowFiles.export(workspaceId),
    importFiles: (files, options) => deps.workflowFiles.import(actor, files, options).catch(refused),
    importForeign: (body) => deps.workflowTransfer.importForeign(actor, body).catch(refused),
    close() {
      deps.piecePackages.stop();
      db.close();
      lock.release();
    },
  };
}

/** The format's parts of a folder (connections.yaml, variables/, workflows/), path → text; dot-files skipped. */
function readFolder(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      const full = join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files[relative(dir, full).split("\\").join("/")] = readFileSync(full, "utf8");
    }
  };
  if (existsSync(join(dir, "connections.yaml"))) files["connections.yaml"] = readFileSync(join(dir, "connections.yaml"), "utf8");
  for (const sub of ["variables", "workflows"]) if (existsSync(join(dir, sub))) walk(join(dir, sub));
  return files;
}

/** `weft import FILE --from n8n|activepieces [--dry-run]` (docs/import.md): one foreign workflow as a draft, and its report. */
async function foreignImport(config: Config, positionals: string[], from: string, dryRun: boolean, usage: string) {
  const file = positionals[0];
  if (!file || positionals.length > 1) fail(usage);
  if (from !== "n8n" && from !== "activepieces") fail(`--from ${from}: the formats are n8n and activepieces`);
  if (!existsSync(file)) fail(`${file} does not exist; ${usage}`);
  let source: Record<string, unknown>;
  try {
    source = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    fail(`${file} is not JSON: ${(error as Error).message}`);
  }
  const backend = await filesBackend(config);
  try {
    const result = await backend.importForeign({ format: from, source, dryRun });
    for (const e of result.report.entries)
      console.log(`${e.outcome.padEnd(12)} ${e.node} (${e.type})${e.step ? ` → ${e.step}` : ""}${e.note ? `: ${e.note}` : ""}`);
    for (const m of result.report.missingPieces) console.log(`missing piece ${m.package}: ${m.command}`);
    if (result.report.hasPlaceholders) console.log("placeholders stand in for what was not mapped: replace them before publishing");
    console.log(result.dryRun ? "dry run: nothing was changed" : `imported as the draft "${result.workflow?.name}" (${result.workflow?.id})`);
  } catch (error) {
    if (!(error instanceof FilesRefused)) throw error;
    fail(error.message);
  } finally {
    backend.close();
  }
}

/** `weft export DIR` and `weft import DIR [--dry-run] [--prune]` (docs/workflows-as-code.md). */
async function filesCommand(config: Config, command: "export" | "import", args: string[]) {
  const usage =
    command === "export" ? "usage: weft export DIR" : "usage: weft import DIR [--dry-run] [--prune], or weft import FILE --from n8n|activepieces [--dry-run]";
  let parsed: { values: { "dry-run"?: boolean; prune?: boolean; from?: string }; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { "dry-run": { type: "boolean" }, prune: { type: "boolean" }, from: { type: "string" } }, allowPositionals: true });
  } catch (error) {
    fail(`${(error as Error).message}; ${usage}`);
  }
  if (command === "import" && parsed.values.from !== undefined)
    return foreignImport(config, parsed.positionals, parsed.values.from, parsed.values["dry-run"] === true, usage);
  const dir = parsed.positionals[0];
  if (!dir || parsed.positionals.length > 1 || (command === "export" && (parsed.values["dry-run"] || parsed.values.prune))) fail(usage);
  if (command === "import" && !existsSync(dir)) fail(`${dir} does not exist; ${usage}`);
  const backend = await filesBackend(config);
  try {
    if (command === "export") {
      const files = await backend.exportFiles();
      // Files of workflows renamed or deleted since the last export must not linger: the format's parts are rewritten whole.
      for (const part of ["workflows", "variables", "connections.yaml"]) rmSync(join(dir, part), { recursive: true, force: true });
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      const workflows = Object.keys(files).filter((p) => p.startsWith("workflows/")).length;
      console.log(`wrote ${workflows} workflow${workflows === 1 ? "" : "s"}, connections.yaml and variables/all.yaml to ${dir}`);
      return;
    }
    const result = await backend.importFiles(readFolder(dir), { dryRun: parsed.values["dry-run"] === true, prune: parsed.values.prune === true });
    for (const entry of result.plan) console.log(`${entry.action} ${entry.kind} ${entry.name}${entry.path ? ` (${entry.path})` : ""}`);
    for (const w of result.warnings) process.stderr.write(`warning: ${w.file} ${w.path}: ${w.message}\n`);
    for (const v of result.secretsToSet ?? [])
      console.log(`secret to set: ${v.name} of ${v.workflow} (${v.path}), stored empty: PUT /api/workflows/${v.id}/variables`);
    const count = (action: string) => result.plan.filter((p) => p.action === action).length;
    const summary = `${count("create")} to create, ${count("update")} to update, ${count("unchanged")} unchanged, ${count("delete")} to delete`;
    console.log(result.dryRun ? `dry run: nothing was changed (${summary})` : `imported: ${summary.replaceAll("to ", "")}`);
  } catch (error) {
    if (!(error instanceof FilesRefused)) throw error;
    for (const p of error.problems) process.stderr.write(`${p.file} ${p.path}: ${p.message}\n`);
    fail(
      error.problems.length ? `nothing was imported: ${error.problems.length} problem${error.problems.length === 1 ? "" : "s"} (listed above)` : error.message,
    );
  } finally {
    backend.close();
  }
}

/**
 * `weft migrate --from DIR --to URL [--force]`: the SQLite database of a data directory copied into PostgreSQL
 * (src/store/copy-to-postgres.ts). The data directory is locked meanwhile, so no server writes to it.
 */
async function copyCommand(args: string[]) {
  const usage = "usage: weft migrate --from DATA_DIR --to postgres://user:password@host:5432/database [--force]";
  let values: { from?: string; to?: string; force?: boolean };
  try {
    ({ values } = parseArgs({ args, options: { from: { type: "string" }, to: { type: "string" }, force: { type: "boolean" } } }));
  } catch (error) {
    fail(`${(error as Error).message}; ${usage}`);
  }
  if (!values.from) fail(`--from is missing: the data directory whose SQLite database to copy; ${usage}`);
  if (!values.to) fail(`--to is missing: the PostgreSQL database to copy into; ${usage}`);
  if (!/^postgres(?:ql)?:\/\/./.test(values.to)) {
    // The URL may hold a password: name only what is wrong with it.
    fail(
      `--to is not a postgres:// URL (it starts "${values.to.slice(0, values.to.indexOf(":") + 1 || 10)}"); use postgres://user:password@host:5432/database`,
    );
  }
  const sqlitePath = join(values.from, "weft.db");
  if (!existsSync(sqlitePath)) fail(`no weft.db in ${values.from}; --from takes the data directory (WEFT_DATA_DIR) of the SQLite installation`);
  const lock = lockDataDir(values.from);
  try {
    const report = await copySqliteToPostgres({ sqlitePath, databaseUrl: values.to, replace: values.force === true });
    const where = describeDatabaseUrl(values.to);
    if (report.replaced.length)
      console.log(`deleted what ${where} held before (--force): ${report.replaced.map((t) => `${t.table} ${t.rows}`).join(", ")} rows`);
    for (const { table, rows } of report.tables) console.log(`${table}: ${rows} row${rows === 1 ? "" : "s"}`);
    console.log(
      `copied ${report.rows} rows in ${report.tables.length} tables from ${sqlitePath} to ${where} (schema version ${report.schemaVersion}); every count matches the source`,
    );
    process.stderr.write(
      `start weft with WEFT_DATABASE_URL set to that database and WEFT_DATA_DIR=${values.from} still: the data directory keeps the encryption key the copied secrets need, and the installed pieces\n`,
    );
  } catch (error) {
    if (error instanceof CopyRefusedError) fail(`nothing was copied: ${error.message}`);
    fail(`the copy failed, no row was copied into ${describeDatabaseUrl(values.to)}: ${(error as Error).message}`);
  } finally {
    lock.release();
  }
}

/**
 * `weft migrate [--dry-run]`: applies what is pending (a SQLite database is copied to backups/ first), or with
 * --dry-run lists it and changes nothing. Other options are the copy into PostgreSQL (copyCommand).
 */
async function migrateCommand(config: Config, args: string[]) {
  if (args.length > 0 && args[0] !== "--dry-run") return await copyCommand(args);
  if (args.length > 1) fail("usage: weft migrate [--dry-run] | weft migrate --from DATA_DIR --to postgres://… [--force]");
  const location = storeLocation(config);
  const where = config.databaseUrl ? `the PostgreSQL database ${describeDatabaseUrl(config.databaseUrl)}` : `the database ${location.sqlitePath}`;
  if (args[0] === "--dry-run") {
    const { version, latest, pending } = await pendingMigrations(location).catch((error) => fail(`cannot read ${where}: ${(error as Error).message}`));
    if (version > latest) fail(new NewerSchemaError(where, version, latest).message);
    if (pending.length === 0) console.log(`${where} is up to date (schema version ${version}); nothing to apply`);
    else {
      console.log(`${where} is at schema version ${version}; weft migrate would apply ${pending.length} migration(s), up to schema version ${latest}:`);
      for (const m of pending) console.log(`  ${m.version} ${m.name}${m.note ? `: ${m.note}` : ""}`);
      if (version > 0)
        console.log(
          config.databaseUrl
            ? `weft does not copy PostgreSQL first: take a dump before it (${pgDumpCommand(version)})`
            : `before it, weft migrate (or the next start) copies the database to ${join(config.dataDir, "backups")}/`,
        );
    }
    return;
  }
  const upgrading: UpgradeListener = ({ from, to, migrations, notes, backup, ms }) => {
    if (ms !== undefined) return;
    if (backup) console.log(`copying the database at schema version ${from} to ${backup} before upgrading it`);
    else if (config.databaseUrl) process.stderr.write(`weft: warning: ${postgresBackupWarning(from)}\n`);
    console.log(`upgrading schema version ${from} to ${to} (${migrations.join(", ")})${notes.map((note) => `; ${note}`).join("")}`);
  };
  const { applied, version } = await migrateStore(location, upgrading).catch((error) => {
    if (error instanceof NewerSchemaError || error instanceof MigrationFailedError || error instanceof UpgradeBackupError) fail(error.message);
    throw error;
  });
  console.log(applied.length ? `applied migrations ${applied.join(", ")}; schema version ${version}` : `up to date; schema version ${version}`);
}

/** `weft backup --verify FILE`: SQLite's integrity check, a schema version this weft knows, Weft's tables present. */
function verifyCommand(args: string[]) {
  if (args.length !== 1) fail("usage: weft backup --verify FILE");
  let check: ReturnType<typeof checkBackupFile>;
  try {
    check = checkBackupFile(args[0]!);
  } catch (error) {
    fail(`cannot verify: ${(error as Error).message}`);
  }
  if (check.problems.length) fail(`${check.path} is not a backup this weft can restore: ${check.problems.join("; ")}`);
  console.log(
    `${check.path}: integrity ok, schema version ${check.version} (this weft: ${check.latest}), ${check.tables} tables, ${check.bytes} bytes; it can be restored with weft restore`,
  );
}

/**
 * `weft restore FILE`: only while no server holds the data directory; the backup is checked first, the current
 * database kept aside until the restored one has opened and passed the check (src/store/sqlite/restore.ts).
 */
function restoreCommand(config: Config, args: string[]) {
  if (args.length !== 1) fail("usage: weft restore FILE (stop the server first; the current database is kept aside)");
  if (config.databaseUrl)
    fail(
      "WEFT_DATABASE_URL is set: restore PostgreSQL with its own tools (pg_restore; docs/operations.md); weft restore restores the SQLite database of a data directory",
    );
  let lock: DataDirLock;
  try {
    lock = acquireDataDirLock(config.dataDir);
  } catch (error) {
    if (error instanceof DataDirLockedError)
      fail(
        `a weft process (pid ${error.pid}) is using the data directory ${config.dataDir}; stop it first (systemctl stop weft, or SIGTERM), then restore. Nothing was changed`,
      );
    throw error;
  }
  try {
    const restored = restoreStore(storeLocation(config), args[0]!);
    console.log(`restored ${restored.path} as ${databasePath(config)} (schema version ${restored.version})`);
    if (restored.aside) console.log(`the database that was in place is kept as ${restored.aside}; delete it once the restored one is right`);
    if (restored.version < restored.latest)
      console.log(`the next start (or weft migrate) upgrades it from schema version ${restored.version} to ${restored.latest}, after copying it to backups/`);
    const keyFile = join(config.dataDir, "encryption.key");
    if (!config.encryptionKey)
      process.stderr.write(
        existsSync(keyFile)
          ? `secrets are decrypted with ${keyFile}: it must be the key file of the installation the backup was taken from\n`
          : `there is no ${keyFile}: copy the key file of the installation the backup was taken from there before starting, or its secrets cannot be decrypted\n`,
      );
  } catch (error) {
    fail((error as Error).message);
  } finally {
    lock.release();
  }
}

/**
 * `weft service install`: writes the systemd unit of docs/install.md for this executable, refusing to replace a
 * file without --force, and prints what is left for root to do (a user, the settings file, systemctl).
 */
function serviceCommand(args: string[]) {
  const usage = "usage: weft service install [--path FILE] [--user NAME] [--data-dir DIR] [--env-file FILE] [--force]";
  let parsed: ReturnType<typeof parseServiceArgs>;
  try {
    parsed = parseServiceArgs(args);
  } catch (error) {
    fail(`${(error as Error).message}; ${usage}`);
  }
  const { values, positionals } = parsed;
  if (positionals[0] !== "install" || positionals.length > 1) fail(usage);
  const path = values.path ?? "/etc/systemd/system/weft.service";
  const user = values.user ?? UNIT_DEFAULTS.user;
  const dataDir = values["data-dir"] ?? UNIT_DEFAULTS.dataDir;
  const envFile = values["env-file"] ?? UNIT_DEFAULTS.envFile;
  if (!/^[a-z_][a-z0-9_-]*$/.test(user)) fail(`--user ${user} is not a system user name (lower-case letters, digits, _ and -)`);
  for (const [flag, dir] of [
    ["--data-dir", dataDir],
    ["--env-file", envFile],
  ]) {
    if (!dir.startsWith("/") || /\s/.test(dir)) fail(`${flag} must be an absolute path without spaces, not ${dir}`);
  }
  if (/^\/(home|root|run\/user)(\/|$)/.test(dataDir))
    fail(`--data-dir ${dataDir} is under a home directory, which the unit hides (ProtectHome); use /var/lib/weft or /srv/weft`);
  if (existsSync(path) && !values.force) fail(`${path} exists; add --force to replace it`);
  try {
    writeFileSync(path, systemdUnit({ command: selfCommand("serve"), user, dataDir, envFile }), { mode: 0o644 });
  } catch (error) {
    fail(`cannot write ${path}: ${(error as Error).message}${(error as NodeJS.ErrnoException).code === "EACCES" ? " (run it as root)" : ""}`);
  }
  const name = basename(path, ".service");
  console.log(`wrote ${path}: runs ${selfCommand("serve").join(" ")} as ${user}, data in ${dataDir}, settings from ${envFile}
left to do, as root (docs/install.md):
  useradd --system --home-dir ${dataDir} --shell /usr/sbin/nologin ${user}
  install -d -m 0750 -o root -g ${user} ${dirname(envFile)} && install -m 0640 -o root -g ${user} /dev/null ${envFile}
  # set WEFT_PUBLIC_URL and the other WEFT_* settings in ${envFile}
  systemctl daemon-reload && systemctl enable --now ${name}`);
}

const parseServiceArgs = (args: string[]) =>
  parseArgs({
    args,
    options: {
      path: { type: "string" },
      user: { type: "string" },
      "data-dir": { type: "string" },
      "env-file": { type: "string" },
      force: { type: "boolean" },
    },
    allowPositionals: true,
  });

/** The `weft` commands (src/main.ts has already dispatched child processes and tuned the collector). */
/** `weft serve [--role all|api|worker]`: the flag stands for WEFT_ROLE, checked with the rest of the configuration. */
function serveOptions(argv: string[]) {
  let values: { role?: string };
  try {
    ({ values } = parseArgs({ args: argv[0] === "serve" ? argv.slice(1) : argv, options: { role: { type: "string" } } }));
  } catch (error) {
    fail(`${(error as Error).message}; usage: weft serve [--role all|api|worker]`);
  }
  if (values.role !== undefined) process.env.WEFT_ROLE = values.role;
}

export async function main(argv: string[]) {
  const command = commandOf(argv);
  if (argv.includes("--help") || argv.includes("-h") || command === "help") {
    console.log(HELP);
    return;
  }
  // Writes a file for another start of weft; the configuration of this one does not matter.
  if (command === "service") return serviceCommand(argv.slice(1));
  let config: Config;
  try {
    if (command === "serve") serveOptions(argv);
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
    throw error;
  }
  switch (command) {
    case "serve":
      // A configuration fault found while building the app (e.g. the WEFT_OAUTH_APPS file) stops start-up plainly.
      await serve(config).catch((error) => {
        if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
        throw error;
      });
      return;
    case "mcp":
      await mcp(config);
      return;
    case "version":
      console.log(describeBuild(VERSION));
      return;
    case "migrate":
      await migrateCommand(config, argv.slice(1));
      return;
    case "restore":
      restoreCommand(config, argv.slice(1));
      return;
    case "backup": {
      if (argv[1] === "--verify") {
        verifyCommand(argv.slice(2));
        return;
      }
      if (!argv[1]) fail("usage: weft backup FILE (a new file; the database is copied while the server may keep running) | weft backup --verify FILE");
      if (config.databaseUrl)
        fail("WEFT_DATABASE_URL is set: back up PostgreSQL with its own tools (pg_dump); weft backup copies the SQLite database of a data directory");
      const source = databasePath(config);
      if (!existsSync(source)) fail(`no database at ${source}; set WEFT_DATA_DIR to the data directory to back up`);
      let copy: { path: string; bytes: number; version: number };
      try {
        // Without migrations: a backup taken before an upgrade keeps the old schema (store/open.ts, backupStore).
        copy = backupStore(storeLocation(config), argv[1]);
      } catch (error) {
        fail(`backup failed: ${(error as Error).message}`);
      }
      console.log(`backed up ${source} to ${copy.path} (${copy.bytes} bytes, schema version ${copy.version})`);
      if (!config.encryptionKey)
        process.stderr.write(`secrets are encrypted with ${join(config.dataDir, "encryption.key")}; copy it too, a backup without it cannot decrypt them\n`);
      return;
    }
    case "token": {
      if (argv[1] !== "create") fail("usage: weft token create --name N --scopes a,b|all [--workspace W]");
      const { values } = parseArgs({ args: argv.slice(2), options: { name: { type: "string" }, scopes: { type: "string" }, workspace: { type: "string" } } });
      if (!values.name) fail("--name is required");
      if (!values.scopes) fail("--scopes is required: a comma-separated list or all");
      const db = await openConfiguredStore(config);
      const identity = new Identity(storageOf(db));
      try {
        const { orgId, workspaceId } = await identity.ensureOrg();
        const token = await identity.createToken({
          orgId,
          workspaceId: values.workspace ?? workspaceId,
          name: values.name,
          scopes: values.scopes,
          createdBy: null,
        });
        console.log(token.token);
        process.stderr.write(`token "${token.name}" (${token.scopes.join(" ")}) for workspace ${token.workspaceId}; it is shown only once\n`);
      } catch (error) {
        fail((error as Error).message);
      } finally {
        db.close();
      }
      return;
    }
    case "keys": {
      if (argv[1] !== "rotate") fail("usage: weft keys rotate");
      const db = await openConfiguredStore(config);
      try {
        const report = await rotateKeys(storageOf(db), config);
        console.log(`re-encrypted ${report.rewritten} value(s) in ${report.rows} row(s) under key ${report.keyId} (${report.keySource})`);
        if (report.unreadable > 0)
          process.stderr.write(
            `${report.unreadable} value(s) could not be decrypted with any held key and were left as they were${config.encryptionKey ? "; set WEFT_ENCRYPTION_KEY_PREVIOUS to the old key and run this again" : ""}\n`,
          );
        process.stderr.write("OAuth2 authorizations in progress were cancelled; start them again\n");
      } catch (error) {
        fail(`key rotation failed, nothing was changed in the database: ${(error as Error).message}`);
      } finally {
        db.close();
      }
      return;
    }
    case "pieces":
      await piecesCommand(config, argv.slice(1));
      return;
    case "export":
    case "import":
      await filesCommand(config, command, argv.slice(1));
      return;
    default:
      fail(
        `unknown command "${command}"; commands: serve, token create, migrate, version, backup, restore, export, import, keys rotate, pieces, mcp, service install (see --help)`,
      );
  }
}
