/**
 * Promotion between environments (docs/workflows-as-code.md, "Environments") with two real `weft serve` processes
 * and a real git remote (`git http-backend` behind a token, test/support/git-server.ts): dev pushes, prod (managed
 * by git) pulls. A connection prod lacks is listed before anything changes; once prod has its own connection of
 * that name, the pull publishes the workflow, which answers its webhook on prod with prod's credential. Edits on prod
 * are refused. Each server has its own data directory and its own database: SQLite there, or, with
 * WEFT_TEST_STORAGE=postgres, a PostgreSQL database of its own each (test/support/postgres-storage.ts), dev and prod
 * alike.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { announceMissingGit, gitRoot, hasGit, startHttpBackend, type GitServer } from "../support/git-server";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { freshPostgresDatabase, postgresClient, testStorage } from "../support/postgres-storage";
import { startServer, type ServerHandle } from "../support/server";

announceMissingGit();

const TOKEN = "promotion-token";
const env = { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0" };
let remote: GitServer;
let dev: ServerHandle;
let prod: ServerHandle;
let api: ReturnType<typeof Bun.serve>;
let url: string;
let prodDatabaseUrl: string | undefined;

beforeAll(async () => {
  if (!hasGit()) return;
  const root = gitRoot();
  root.repo("flows.git");
  remote = await startHttpBackend(root.root, TOKEN);
  url = remote.url("flows.git");
  // The API the workflow calls: it answers the key it was called with.
  api = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => Response.json({ key: req.headers.get("x-api-key") }) });
  // With WEFT_TEST_STORAGE=postgres each server stores in a fresh PostgreSQL database of its own.
  const database = async (): Promise<Record<string, string>> =>
    testStorage() === "postgres" ? { WEFT_DATABASE_URL: (await freshPostgresDatabase()).url } : {};
  const [devDb, prodDb] = [await database(), await database()];
  prodDatabaseUrl = prodDb.WEFT_DATABASE_URL;
  [dev, prod] = await Promise.all([startServer({ env: { ...env, ...devDb } }), startServer({ env: { ...env, ...prodDb } })]);
});

afterAll(async () => {
  await Promise.all([dev?.stop(), prod?.stop()]);
  await remote?.stop();
  api?.stop(true);
});

async function call(server: ServerHandle, method: string, path: string, body?: unknown) {
  const res = await server.fetch(path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const connection = (key: string) => ({ pieceId: "http", name: "The API", values: { header_name: "X-Api-Key", header_value: key } });

/** Webhook → the http piece with the connection → the reply is what the API answered. */
const definition = (connectionId: string) => ({
  schemaVersion: 2,
  trigger: {
    name: "trigger",
    type: "webhook",
    pieceId: "webhook",
    actionId: "catch_webhook",
    config: {},
    nextAction: {
      name: "call",
      type: "PIECE",
      pieceId: "http",
      actionId: "send_request",
      connectionId,
      config: { method: "GET", url: `http://127.0.0.1:${api.port}/me`, auth_type: "connection" },
      nextAction: { name: "reply", type: "PIECE", pieceId: "webhook", actionId: "respond", config: { status: 200, body: "{{call.output.body}}" } },
    },
  },
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
});

test.skipIf(!hasGit())("dev pushes, prod pulls and publishes; the webhook on prod runs with prod's connection; edits on prod are refused", async () => {
  const devConnection = await call(dev, "POST", "/api/connections", connection("dev-key"));
  expect(devConnection.status).toBe(201);
  const made = await call(dev, "POST", "/api/workflows", { name: "Who am I", definition: definition(devConnection.body.data.id) });
  expect(made.status).toBe(201);
  const id = made.body.data.id;
  expect((await call(dev, "PUT", "/api/git/settings", { remoteUrl: url, token: TOKEN })).status).toBe(200);
  const pushed = await call(dev, "POST", "/api/git/push", { message: "Who am I" });
  expect(pushed.body.data).toMatchObject({ pushed: true });

  expect((await call(prod, "PUT", "/api/git/settings", { remoteUrl: url, token: TOKEN, managed: true, prune: true })).status).toBe(200);
  // Prod has no connection "The API": listed, and nothing changes.
  const missing = await call(prod, "POST", "/api/git/pull", {});
  expect(missing.status).toBe(400);
  expect(missing.body.error.code).toBe("VALIDATION_FAILED");
  expect(missing.body.error.details.problems).toContainEqual(
    expect.objectContaining({ file: "connections.yaml", message: expect.stringContaining('"The API"') }),
  );
  expect((await call(prod, "GET", "/api/workflows")).body.total).toBe(0);

  // Connections are prod's own: created there (not a workflow edit), resolved by name.
  const prodConnection = await call(prod, "POST", "/api/connections", connection("prod-key"));
  expect(prodConnection.status).toBe(201);
  const pulled = await call(prod, "POST", "/api/git/pull", {});
  expect(pulled.status).toBe(200);
  expect(pulled.body.data.published).toEqual([{ id, name: "Who am I" }]);
  const onProd = (await call(prod, "GET", `/api/workflows/${id}`)).body.data;
  expect(onProd.status).toBe("active");
  expect(JSON.stringify(onProd.definition)).toContain(prodConnection.body.data.id);
  // Prod stores where the test asked: its own PostgreSQL database holds the pulled workflow, or its SQLite file.
  expect(existsSync(join(prod.dataDir, "weft.db"))).toBe(prodDatabaseUrl === undefined);
  if (prodDatabaseUrl)
    expect(await postgresClient(prodDatabaseUrl).get("SELECT name, status FROM workflows WHERE id = $1", [id])).toEqual({ name: "Who am I", status: "active" });

  const hook = ((await call(prod, "GET", `/api/workflows/${id}/trigger`)).body.data.webhook.url as string).replace(/^http:\/\/[^/]+/, prod.url);
  const answer = await fetch(hook, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({ key: "prod-key" });

  const edit = await call(prod, "PUT", `/api/workflows/${id}`, { name: "changed on prod" });
  expect(edit.status).toBe(409);
  expect(edit.body.error).toMatchObject({ code: "MANAGED_BY_GIT", message: expect.stringContaining('branch "main"') });
  expect((await call(prod, "POST", `/api/workflows/${id}/unpublish`)).status).toBe(409);

  // Dev deletes it; with prune, prod's next pull unpublishes and deletes it.
  expect((await call(dev, "DELETE", `/api/workflows/${id}`)).status).toBe(200);
  expect((await call(dev, "POST", "/api/git/push", { message: "Remove Who am I" })).body.data.pushed).toBe(true);
  const pruned = await call(prod, "POST", "/api/git/pull", {});
  expect(pruned.body.data.plan).toContainEqual(expect.objectContaining({ action: "delete", kind: "workflow", id }));
  expect((await call(prod, "GET", `/api/workflows/${id}`)).status).toBe(404);
  expect((await fetch(hook, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(404);
});
