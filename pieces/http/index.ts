/** HTTP: call any HTTP API, or poll a JSON endpoint for new items. */
import { action, Auth, definePiece, Property, Show, trigger } from "../../src/pieces-sdk";
import type { PollContext, ResolvedAuth } from "../../src/pieces-sdk/types";
import { readPath } from "../data";
import { requestProps, responseProps, sendRequest } from "./request";

/** The run's W3C trace context on the step's call (docs/operations.md, "Traces"), unless the step sets `traceparent` itself. */
export const traceHeaders = (traceparent: string | undefined): Record<string, string> => (traceparent ? { traceparent } : {});

/** The Authorization (or custom) header a step's auth settings produce. */
export function authHeaders(config: Record<string, unknown>, auth: ResolvedAuth | undefined): Record<string, string> {
  switch (String(config.auth_type ?? "none")) {
    case "none":
      return {};
    case "bearer":
      if (!config.token) throw new Error("auth_type bearer needs token");
      return { authorization: `Bearer ${config.token}` };
    case "basic":
      if (config.username === undefined || config.username === "") throw new Error("auth_type basic needs username");
      return { authorization: `Basic ${btoa(`${config.username}:${config.password ?? ""}`)}` };
    case "connection":
      if (!auth) throw new Error("auth_type connection needs a connection; set the step's connectionId to an HTTP connection");
      return connectionHeaders(auth);
    default:
      throw new Error(`auth_type "${config.auth_type}" is unknown; use none, bearer, basic or connection`);
  }
}

function connectionHeaders(auth: ResolvedAuth): Record<string, string> {
  switch (auth.kind) {
    case "oauth2":
      return { authorization: `${auth.tokenType && auth.tokenType.toLowerCase() !== "bearer" ? auth.tokenType : "Bearer"} ${auth.accessToken}` };
    case "api_key":
      return { authorization: auth.apiKey };
    case "basic":
      return { authorization: `Basic ${btoa(`${auth.username}:${auth.password}`)}` };
    case "custom":
      return { [String(auth.values.header_name || "authorization").toLowerCase()]: String(auth.values.header_value ?? "") };
  }
}

const authProps = (types: string[]) => ({
  auth_type: Property.staticDropdown({ displayName: "Authentication", default: "none", options: types }),
  token: Property.secretText({ displayName: "Bearer token", required: true, displayConditions: [Show.eq("auth_type", "bearer")] }),
  username: Property.shortText({ displayName: "Username", required: true, displayConditions: [Show.eq("auth_type", "basic")] }),
  password: Property.secretText({ displayName: "Password", displayConditions: [Show.eq("auth_type", "basic")] }),
});

export default definePiece({
  id: "http",
  name: "HTTP",
  version: "1.0.0",
  icon: "🌐",
  description: "Call any HTTP API, or poll a JSON endpoint for new items",
  // A connection holds one header (name + secret value) for auth_type "connection".
  auth: Auth.custom({
    header_name: Property.shortText({ displayName: "Header name", default: "Authorization" }),
    header_value: Property.secretText({ displayName: "Header value", description: "e.g. Bearer sk_live_…", required: true }),
  }),
  actions: [
    action({
      id: "send_request",
      name: "Send HTTP request",
      description: "Send a request and output its status, headers and (parsed) body",
      sideEffects: "external",
      requiresAuth: false,
      // Requests may not be idempotent (POST): no automatic retry; add one with an error branch if wanted.
      retry: { maxAttempts: 1, backoffMs: 0 },
      props: { ...requestProps(), ...authProps(["none", "bearer", "basic", "connection"]), ...responseProps() },
      outputSchema: {
        type: "object",
        properties: { status: { type: "integer", required: true }, headers: { type: "object" }, body: { type: "json" } },
      },
      sampleData: { status: 200, headers: { "content-type": "application/json" }, body: { id: 1, name: "Ada" } },
      run: async (ctx) => sendRequest(ctx, ctx.config, authHeaders(ctx.config, ctx.auth), traceHeaders(ctx.run.traceparent)),
    }),
  ],
  triggers: [
    trigger({
      id: "poll_json",
      name: "Poll a JSON endpoint",
      description: "GETs a URL on an interval and starts a run for each item whose id was not seen before",
      type: "poll",
      props: {
        url: Property.shortText({ displayName: "URL", required: true, format: "uri" }),
        headers: Property.keyValue({ displayName: "Headers" }),
        items_path: Property.shortText({
          displayName: "Items path",
          description: "Dotted path to the array in the response, e.g. data.items; blank when the response is the array",
        }),
        id_field: Property.shortText({ displayName: "Id field", description: "Dotted path to each item's unique id", default: "id", required: true }),
        ...authProps(["none", "bearer", "basic"]),
      },
      sampleData: { id: 1, name: "Ada" },
      poll: async (ctx: PollContext) => {
        const result = await sendRequest(
          { fetch: ctx.fetch, signal: AbortSignal.timeout(30_000) },
          { method: "GET", url: ctx.config.url, headers: ctx.config.headers, response_type: "json" },
          authHeaders(ctx.config, ctx.auth),
        );
        const path = String(ctx.config.items_path ?? "").trim();
        const items = path ? readPath(result.body, path) : result.body;
        if (!Array.isArray(items)) throw new Error(`the response${path ? ` at "${path}"` : ""} is not an array; set items_path to where the list is`);
        return items;
      },
      dedupe: {
        strategy: "id",
        key: (item, config) => {
          const id = readPath(item, String(config.id_field || "id"));
          return typeof id === "number" || typeof id === "string" ? id : JSON.stringify(id ?? null);
        },
      },
    }),
  ],
});
