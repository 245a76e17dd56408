/**
 * Connections hot path: what a step pays to get its credentials (row read + AES-256-GCM decrypt), and
 * how long 100 concurrent runs wait when their shared token must be refreshed first (one refresh).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/http/logger";
import { openDatabase } from "../src/store/sqlite/db";

const dataDir = mkdtempSync(join(tmpdir(), "weft-bench-conn-"));
const config = loadConfig({ WEFT_DATA_DIR: dataDir, WEFT_LOG_LEVEL: "silent", WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
const db = openDatabase(join(dataDir, "weft.db"), { synchronous: "NORMAL" });
const { deps } = createApp({ config, db, log: createLogger("silent") });
const { orgId, workspaceId } = await deps.identity.ensureOrg();
const actor = { orgId, workspaceId, userId: null };

let refreshes = 0;
const provider = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch() {
    refreshes++;
    await Bun.sleep(20); // a provider's typical answer time, so callers overlap
    return Response.json({ access_token: `at_${refreshes}`, refresh_token: `rt_${refreshes}`, token_type: "Bearer", expires_in: 3600 });
  },
});
const tokenUrl = `http://127.0.0.1:${provider.port}/token`;

const conn = await deps.connections.create(actor, {
  pieceId: "oauth2",
  name: "bench",
  clientId: "c",
  clientSecret: "s",
  config: { authUrl: "https://idp.example.com/a", tokenUrl },
});
const store = deps.connections.ctx.storage.connections;
const setTokens = (expiresInMs: number) =>
  store.setTokens(
    conn.id,
    deps.secrets.encrypt(JSON.stringify({ accessToken: "at_0", refreshToken: "rt_0", extra: {} })),
    new Date(Date.now() + expiresInMs).toISOString(),
    new Date().toISOString(),
  );
const ref = { workspaceId, connectionId: conn.id, pieceId: "oauth2" };

await setTokens(3600_000);
for (let i = 0; i < 2000; i++) await deps.connections.resolveConnectionAuth(ref); // warm-up
const n = 50_000;
let started = performance.now();
for (let i = 0; i < n; i++) await deps.connections.resolveConnectionAuth(ref);
const perCall = (performance.now() - started) / n;
console.log(
  `resolveConnectionAuth, fresh OAuth2 token: ${(1000 / perCall).toFixed(0)} calls/s, ${(perCall * 1000).toFixed(1)} µs/call (${cpus().length} cores)`,
);

const rounds = 20;
let waited = 0;
for (let r = 0; r < rounds; r++) {
  await setTokens(10_000); // inside the refresh margin
  started = performance.now();
  await Promise.all(Array.from({ length: 100 }, () => deps.connections.resolveConnectionAuth(ref)));
  waited += performance.now() - started;
}
console.log(
  `100 concurrent runs, token due for refresh: ${(waited / rounds).toFixed(1)} ms until all hold the new token; provider refreshes: ${refreshes} for ${rounds} rounds (1 per round expected)`,
);
provider.stop(true);
db.close();
rmSync(dataDir, { recursive: true, force: true });
