/**
 * The OAuth2 flow against a real Weft process and a real OAuth2 server, both on loopback sockets:
 * create → start → follow the authorize URL → callback → active. Then what must never leak does not:
 * no secret or token in any API answer or log line, and no plaintext token in the database file.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type ServerHandle } from "../support/server";
import { startProvider, type Provider } from "./support/oauth-provider";

let s: ServerHandle;
let provider: Provider;
const answers: string[] = [];
/** Authorization code and PKCE verifier of the flow: short-lived, but no more loggable than tokens. */
const flowSecrets: string[] = [];

beforeAll(async () => {
  provider = await startProvider({ expiresIn: 3600 });
  s = await startServer({ env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "debug" } });
});
afterAll(async () => {
  await s.stop();
  provider.stop();
});

async function call(method: string, path: string, body?: unknown) {
  const res = await s.fetch(path, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  answers.push(text);
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

test("create → start → provider → callback → active, over real sockets", async () => {
  const made = await call("POST", "/api/connections", {
    pieceId: "oauth2",
    name: "loopback",
    clientId: provider.clientId,
    clientSecret: provider.clientSecret,
    config: { authUrl: provider.authUrl, tokenUrl: provider.tokenUrl, scope: "read write" },
  });
  expect(made.status).toBe(201);
  const id = made.body.data.id;
  const start = await call("POST", `/api/connections/${id}/oauth2/start`);
  expect(start.body.data.redirectUri).toBe(`${s.url}/api/oauth2/callback`);
  // The browser: the provider redirects it to Weft's callback, which answers a page.
  const hop = await fetch(start.body.data.authorizeUrl, { redirect: "manual" });
  const callbackUrl = hop.headers.get("location")!;
  expect(callbackUrl.startsWith(`${s.url}/api/oauth2/callback?`)).toBe(true);
  flowSecrets.push(new URL(callbackUrl).searchParams.get("code")!);
  const page = await fetch(callbackUrl);
  const html = await page.text();
  answers.push(html);
  expect(page.status).toBe(200);
  expect(html).toContain("You may close this window");
  flowSecrets.push(provider.lastTokenForm()!.get("code_verifier")!);
  expect(flowSecrets[1]).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // The UI polls until active.
  const after = await call("GET", `/api/connections/${id}`);
  expect(after.body.data.status).toBe("active");
  expect(after.body.data.tokenExpiresAt).not.toBeNull();
  expect(provider.issued.length).toBe(2); // one access token, one refresh token
  await call("GET", "/api/connections");
  await call("PATCH", `/api/connections/${id}`, { name: "renamed" });
});

test("no secret or token in any API answer, log line, or the database file", async () => {
  const secrets = [provider.clientSecret, ...provider.issued, ...flowSecrets];
  expect(secrets.length).toBe(5);
  for (const answer of answers) for (const secret of secrets) expect(answer).not.toContain(secret);
  await s.stop(); // checkpoints the WAL into the main file
  const logs = s.output();
  expect(logs).toContain("oauth2 connection authorized"); // the log is there; the secrets are not
  for (const secret of secrets) expect(logs).not.toContain(secret);
  const files = readdirSync(s.dataDir).filter((f) => f.startsWith("weft.db"));
  expect(files).toContain("weft.db");
  for (const file of files) {
    const bytes = readFileSync(join(s.dataDir, file));
    for (const secret of secrets) expect(bytes.includes(secret)).toBe(false);
  }
  // Positive control: the database does hold the connection, as ciphertext.
  expect(readFileSync(join(s.dataDir, "weft.db")).includes("renamed")).toBe(true);
});
