/**
 * Connection (docs/connections.md) and the bodies of the Connections API. Which credential fields a connection takes
 * depends on its piece's auth declaration; the core checks that and names the fields that apply.
 */
import { t } from "elysia";
import { DateTime, PageQuery, Uuid } from "./common";

const strict = { additionalProperties: false } as const;
const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()]);

export const ConnectionStatus = t.Union([t.Literal("pending"), t.Literal("active"), t.Literal("error")], {
  description: "pending: awaiting OAuth2 authorization; active: usable; error: see statusMessage (e.g. the refresh token was rejected — reconnect)",
});

const Url = (description: string) => t.String({ minLength: 1, maxLength: 2000, description });

export const OAuth2Config = t.Object(
  {
    authUrl: t.Optional(Url("generic oauth2 piece: the provider's authorize URL")),
    tokenUrl: t.Optional(Url("generic oauth2 piece: the provider's token URL")),
    scope: t.Optional(t.String({ maxLength: 2000, description: "space-separated scopes; replaces the piece's default scopes" })),
    grantType: t.Optional(
      t.Union([t.Literal("authorization_code"), t.Literal("client_credentials")], {
        description: "default authorization_code; client_credentials where the piece supports it",
      }),
    ),
  },
  { ...strict, description: "non-secret OAuth2 settings" },
);

const credentialFields = {
  clientId: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 1000,
      description: "OAuth2: the client id of your app at the provider (omit to use the instance's managed app, when configured)",
    }),
  ),
  clientSecret: t.Optional(t.String({ minLength: 1, maxLength: 4000, description: "OAuth2: the client secret; stored encrypted, never returned" })),
  apiKey: t.Optional(t.String({ minLength: 1, maxLength: 8000, description: "api_key pieces; stored encrypted, never returned" })),
  username: t.Optional(t.String({ maxLength: 1000, description: "basic pieces" })),
  password: t.Optional(t.String({ maxLength: 4000, description: "basic pieces; stored encrypted, never returned" })),
  values: t.Optional(t.Record(t.String(), t.Any(), { description: "custom pieces: the fields the piece declares (secret ones are stored encrypted)" })),
  config: t.Optional(OAuth2Config),
};

export const ConnectionCreateBody = t.Object(
  {
    pieceId: t.String({ minLength: 1, maxLength: 200 }),
    name: t.String({ minLength: 1, maxLength: 100 }),
    ...credentialFields,
  },
  strict,
);

export const ConnectionUpdateBody = t.Object(
  { name: t.Optional(t.String({ minLength: 1, maxLength: 100 })), ...credentialFields },
  {
    ...strict,
    description:
      "fields to change; config and values merge key by key. Changing the client, grant, URLs or scope of an OAuth2 connection clears its tokens (status pending: authorize again)",
  },
);

export const ConnectionListQuery = t.Object(
  {
    pieceId: t.Optional(t.String({ description: "only connections of this piece" })),
    status: t.Optional(t.String({ description: "pending, active or error; any other value is ignored" })),
    ...PageQuery,
  },
  { additionalProperties: true },
);

export const Connection = t.Object(
  {
    id: Uuid,
    workspaceId: Uuid,
    pieceId: t.String(),
    name: t.String(),
    authKind: t.Union([t.Literal("oauth2"), t.Literal("api_key"), t.Literal("basic"), t.Literal("custom")]),
    grantType: Nullable(t.String()),
    status: ConnectionStatus,
    statusMessage: Nullable(t.String()),
    config: t.Record(t.String(), t.Any(), { description: "OAuth2 settings: authUrl, tokenUrl, scope, grantType" }),
    clientId: Nullable(t.String()),
    managedApp: t.Boolean({ description: "true when the instance's managed OAuth app (WEFT_OAUTH_APPS) is used" }),
    username: t.Optional(t.String()),
    values: t.Optional(t.Record(t.String(), t.Any(), { description: "custom fields; secret ones masked" })),
    credentials: t.Record(t.String(), t.String(), { description: 'every stored secret or token, masked as "********"' }),
    tokenExpiresAt: Nullable(DateTime),
    createdBy: Nullable(t.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: "Connection" },
);

export const AuthorizeStart = t.Object({
  authorizeUrl: t.String({
    format: "uri",
    description: "open this in the person's browser; minted fresh per call, valid 10 minutes by default (WEFT_OAUTH_STATE_TTL_SECONDS), single use",
  }),
  redirectUri: t.String({ format: "uri", description: "{WEFT_PUBLIC_URL}/api/oauth2/callback; must match the provider's registered redirect URI" }),
});

export const ConnectionTestResult = t.Object({ ok: t.Boolean(), message: t.String() });

export const CallbackQuery = t.Object(
  {
    code: t.Optional(t.String({ description: "the authorization code" })),
    state: t.Optional(t.String({ description: "the signed state Weft put in the authorize URL" })),
    error: t.Optional(t.String({ description: "set by the provider when authorization was not granted" })),
    error_description: t.Optional(t.String()),
  },
  { additionalProperties: true },
);
