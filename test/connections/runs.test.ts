/**
 * Connections through REAL workflow runs (issue 8 "Done when"), against a real Weft process and a real
 * OAuth2 server, both on loopback: a published workflow whose step is the generic `oauth2.request` action
 * calls the provider's API with the connection's bearer token; an expiring token under 10 concurrent runs
 * is refreshed once; a refresh answered `invalid_grant` fails the step with "reconnect" and turns the
 * connection `error`. Neither run steps nor API answers nor log lines ever hold a token or the client secret.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../support/server";
import { startProvider, type Provider } from "./support/oauth-provider";

let s: ServerHandle;
let provider: Provider;
/** Every API answer body of this file, to grep for secrets at the end. */
const answers: string[] = [];
const runIds: string[] = [];

beforeAll(async () => {
  // The token endpoint is slow enough that ten concurrent runs all ask while the first refresh is in flight.
  provider = await startProvider({ expiresIn: 3600, tokenDelayMs: 100 });
  s = await startServer({ env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "debug" } });
});
afterAll(async () => {
  await s.stop();
  provider.stop();
});

async function call(method: string, path: string, body?: unknown) {
  const res = await s.fetch(path, {
    method,
    headers: body !== undefined ? { "content-type": "application/json" } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  answers.push(text);
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

/** start → the provider's authorize endpoint → Weft's callback, all over sockets, as a browser would. */
async function authorize(id: string, expiresIn: number) {
  provider.settings.expiresIn = expiresIn;
  const start = await call("POST", `/api/connections/${id}/oauth2/start`);
  expect(start.status).toBe(200);
  const hop = await fetch(start.body.data.authorizeUrl, { redirect: "manual" });
  const page = await fetch(hop.headers.get("location")!);
  answers.push(await page.text());
  expect(page.status).toBe(200);
  expect((await call("GET", `/api/connections/${id}`)).body.data.status).toBe("active");
}

async function connectionAndWorkflow() {
  const made = await call("POST", "/api/connections", {
    pieceId: "oauth2",
    name: `api-${crypto.randomUUID().slice(0, 8)}`,
    clientId: provider.clientId,
    clientSecret: provider.clientSecret,
    config: { authUrl: provider.authUrl, tokenUrl: provider.tokenUrl, scope: "read write" },
  });
  expect(made.status).toBe(201);
  const connectionId = made.body.data.id as string;
  const definition = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "manual",
      config: {},
      nextAction: {
        name: "whoami",
        type: "PIECE",
        pieceId: "oauth2",
        actionId: "request",
        connectionId,
        config: { method: "GET", url: `${provider.base}/me` },
        nextAction: {
          name: "echo",
          type: "PIECE",
          pieceId: "oauth2",
          actionId: "request",
          connectionId,
          config: { method: "GET", url: `${provider.base}/echo` },
        },
      },
    },
    settings: {},
    variables: {},
    annotations: null,
    pinnedData: {},
  };
  const wf = await call("POST", "/api/workflows", { name: `calls the API ${connectionId.slice(0, 8)}`, definition });
  expect(wf.status).toBe(201);
  const published = await call("POST", `/api/workflows/${wf.body.data.id}/publish`);
  expect(published.status).toBe(200);
  return { connectionId, workflowId: wf.body.data.id as string };
}

async function runProduction(workflowId: string) {
  const res = await call("POST", `/api/workflows/${workflowId}/run?environment=production&wait=10`, {});
  expect(res.status).toBe(200);
  runIds.push(res.body.data.id);
  return res.body.data;
}

const step = (run: any) => run.steps.find((st: any) => st.nodeId === "whoami");
const lastAccessToken = () => provider.issued.filter((v) => v.startsWith("at_")).at(-1)!;

describe("a connection used by real workflow runs", () => {
  test("the run's step calls the API with the connection's access token as a bearer token", async () => {
    const { connectionId, workflowId } = await connectionAndWorkflow();
    await authorize(connectionId, 3600);
    const seen = provider.apiAuthorizations.length;
    const run = await runProduction(workflowId);
    expect(run.status).toBe("completed");
    expect(step(run)).toMatchObject({ status: "completed", outputData: { status: 200, body: { id: "me" } } });
    // An API that echoes the request back: the run step keeps the answer but not the token in it.
    const echo = run.steps.find((st: any) => st.nodeId === "echo");
    expect(echo.status).toBe("completed");
    expect(echo.outputData.body.headers.authorization).toMatch(/^Bearer \S+$/);
    expect(echo.outputData.body.headers.authorization).not.toContain(lastAccessToken());
    expect(provider.apiAuthorizations.slice(seen)).toEqual([`Bearer ${lastAccessToken()}`]);
  });

  test("an expiring token under 10 concurrent runs: ONE refresh, all 10 runs complete with the new token", async () => {
    const { connectionId, workflowId } = await connectionAndWorkflow();
    // 60 s is inside the server's 120 s refresh margin: the next run must refresh first.
    await authorize(connectionId, 60);
    const expiring = lastAccessToken();
    provider.settings.expiresIn = 3600;
    const refreshes = provider.counts.refresh;
    const seen = provider.apiAuthorizations.length;
    const runs = await Promise.all(Array.from({ length: 10 }, () => runProduction(workflowId)));
    expect(provider.counts.refresh).toBe(refreshes + 1);
    expect(runs.map((r) => r.status)).toEqual(Array(10).fill("completed"));
    const fresh = lastAccessToken();
    expect(fresh).not.toBe(expiring);
    expect(provider.apiAuthorizations.slice(seen)).toEqual(Array(10).fill(`Bearer ${fresh}`));
    const after = (await call("GET", `/api/connections/${connectionId}`)).body.data;
    expect(Date.parse(after.tokenExpiresAt) - Date.now()).toBeGreaterThan(3500_000);
  });

  test("invalid_grant on refresh: the step fails telling the user to reconnect; the connection turns error", async () => {
    const { connectionId, workflowId } = await connectionAndWorkflow();
    await authorize(connectionId, 60);
    provider.revokeRefreshTokens();
    const seen = provider.apiAuthorizations.length;
    const run = await runProduction(workflowId);
    expect(run.status).toBe("failed");
    const failed = step(run);
    expect(failed.status).toBe("failed");
    expect(failed.errorMessage).toContain("reconnect");
    expect(failed.errorMessage).toContain(`/api/connections/${connectionId}/oauth2/start`);
    expect(provider.apiAuthorizations.length).toBe(seen); // the API was never called with a dead token
    const after = (await call("GET", `/api/connections/${connectionId}`)).body.data;
    expect(after.status).toBe("error");
    expect(after.statusMessage).toContain("invalid_grant");
    // The next run fails the same way at once, without asking the provider again.
    const rejected = provider.counts.rejected;
    const again = await runProduction(workflowId);
    expect(step(again).errorMessage).toContain("reconnect");
    expect(provider.counts.rejected).toBe(rejected);
  });

  test("no access token, refresh token or client secret in run steps, API answers or log lines", async () => {
    for (const id of runIds) {
      const run = await call("GET", `/api/runs/${id}`);
      expect(run.status).toBe(200);
      expect(run.body.data.steps.length).toBeGreaterThan(0);
    }
    const secrets = [provider.clientSecret, ...provider.issued];
    expect(provider.issued.some((v) => v.startsWith("rt_"))).toBe(true);
    for (const answer of answers) for (const secret of secrets) expect(answer).not.toContain(secret);
    await s.stop();
    const logs = s.output();
    // Positive controls: the log does record the refresh and the rejected one; the values are not there.
    expect(logs).toContain("oauth2 token refreshed");
    expect(logs).toContain("oauth2 token refresh failed");
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});
