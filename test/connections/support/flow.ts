/** Helpers for connection tests: create a generic OAuth2 connection against the test provider and authorize it in-process. */
import { expect } from "bun:test";
import { action, Auth, definePiece, Property } from "../../../src/pieces-sdk";
import type { TestApp } from "../../support/app";
import type { Provider } from "./oauth-provider";

export async function createGeneric(t: TestApp, provider: Provider, extra: Record<string, unknown> = {}, token?: string) {
  const res = await t.req("POST", "/api/connections", {
    token,
    body: {
      pieceId: "oauth2",
      name: `conn-${crypto.randomUUID().slice(0, 8)}`,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      config: { authUrl: provider.authUrl, tokenUrl: provider.tokenUrl, scope: "read write" },
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; workspaceId: string; name: string; status: string };
}

/** start → the provider's authorize endpoint (a real HTTP hop) → the callback. Returns the callback answer. */
export async function authorize(t: TestApp, id: string, token?: string) {
  const start = await t.req("POST", `/api/connections/${id}/oauth2/start`, { token });
  expect(start.status).toBe(200);
  const hop = await fetch(start.body.data.authorizeUrl, { redirect: "manual" });
  expect(hop.status).toBe(302);
  const location = new URL(hop.headers.get("location")!);
  const callback = await t.req("GET", location.pathname + location.search, { token: null });
  return { start, location, callback };
}

/** Pieces with the other auth kinds, each with a connection check, for tests. */
export function registerTestPieces(t: TestApp) {
  t.deps.pieces.register(
    definePiece({
      id: "test-apikey",
      name: "API key test",
      version: "1.0.0",
      description: "test",
      auth: Auth.apiKey({ header: "x-api-key" }),
      checkConnection: async ({ auth }) => (auth.kind === "api_key" && auth.apiKey === "good-key-0001" ? { ok: true } : { ok: false, message: "key refused" }),
      actions: [action({ id: "noop", name: "noop", description: "noop", run: () => ({}) })],
    }),
  );
  t.deps.pieces.register(
    definePiece({
      id: "test-basic",
      name: "Basic test",
      version: "1.0.0",
      description: "test",
      auth: Auth.basic(),
      actions: [action({ id: "noop", name: "noop", description: "noop", run: () => ({}) })],
    }),
  );
  t.deps.pieces.register(
    definePiece({
      id: "test-custom",
      name: "Custom test",
      version: "1.0.0",
      description: "test",
      auth: Auth.custom({
        subdomain: Property.shortText({ required: true }),
        token: Property.secretText({ required: true }),
        region: Property.staticDropdown({ options: ["eu", "us"] }),
      }),
      actions: [action({ id: "noop", name: "noop", description: "noop", run: () => ({}) })],
    }),
  );
}
