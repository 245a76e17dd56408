/** OAuth2: a generic OAuth2 piece for any provider; the connection's config names the provider's URLs and scope. */
import { action, Auth, definePiece, Property } from "../../src/pieces-sdk";
import { requestProps, responseProps, sendRequest } from "../http/request";

export default definePiece({
  id: "oauth2",
  name: "OAuth2 (generic)",
  version: "1.0.0",
  icon: "🔑",
  description: "Call any OAuth2-protected API with a connection's bearer token",
  auth: Auth.oauth2({
    // The URLs and scope come from each connection's config (docs/connections.md: the generic `oauth2` piece).
    authorizeUrl: "",
    tokenUrl: "",
    scopes: [],
    fromConnectionConfig: true,
    grantTypes: ["authorization_code", "client_credentials"],
    connectionConfig: {
      authUrl: Property.shortText({ displayName: "Authorize URL", required: true, format: "uri" }),
      tokenUrl: Property.shortText({ displayName: "Token URL", required: true, format: "uri" }),
      scope: Property.shortText({ displayName: "Scope", description: "Space-separated scopes" }),
    },
  }),
  actions: [
    action({
      id: "request",
      name: "Authorized request",
      description: "Send an HTTP request with the connection's access token as a bearer token",
      sideEffects: "external",
      retry: { maxAttempts: 1, backoffMs: 0 },
      props: { ...requestProps(), ...responseProps() },
      outputSchema: {
        type: "object",
        properties: { status: { type: "integer", required: true }, headers: { type: "object" }, body: { type: "json" } },
      },
      sampleData: { status: 200, headers: { "content-type": "application/json" }, body: { id: "me" } },
      run: async (ctx) => {
        if (ctx.auth?.kind !== "oauth2") throw new Error("this step needs an OAuth2 connection; set its connectionId to an active oauth2 connection");
        const type = ctx.auth.tokenType && ctx.auth.tokenType.toLowerCase() !== "bearer" ? ctx.auth.tokenType : "Bearer";
        return sendRequest(ctx, ctx.config, { authorization: `${type} ${ctx.auth.accessToken}` });
      },
    }),
  ],
});
