/** Single sign-on providers (docs/teams.md, "Single sign-on"). */
import { t } from "elysia";
import { DateTime, Uuid } from "./common";
import { AssignableRole as Role } from "./identity";
const RoleMapping = t.Array(
  t.Object(
    {
      value: t.String({ minLength: 1, maxLength: 200, description: "a value of the role claim, e.g. a group name" }),
      role: Role,
      workspaceId: t.Optional(Uuid),
    },
    { additionalProperties: false },
  ),
  { maxItems: 200 },
);

export const SsoProviderBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100, description: 'shown on the login page as "Sign in with <name>"' }),
    issuer: t.String({ minLength: 1, maxLength: 500, description: "the issuer URL (https; http only on loopback)" }),
    clientId: t.String({ minLength: 1, maxLength: 500 }),
    clientSecret: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: "omitted: kept; null or empty: a public client" })),
    scopes: t.Optional(t.String({ maxLength: 500, description: 'space-separated; "openid" is always added; default "openid email profile"' })),
    roleClaim: t.Optional(t.Union([t.String({ maxLength: 100 }), t.Null()], { description: 'the claim whose values roleMapping maps, e.g. "groups"' })),
    roleMapping: t.Optional(RoleMapping),
    defaultRole: t.Optional(Role),
    ssoOnly: t.Optional(t.Boolean({ description: "refuse password logins, except the org owner's (break-glass)" })),
    workspaceId: t.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const SsoProviderPublic = t.Object({ id: Uuid, name: t.String(), startPath: t.String() });

export const SsoProvider = t.Object({
  id: Uuid,
  name: t.String(),
  issuer: t.String(),
  clientId: t.String(),
  hasClientSecret: t.Boolean(),
  scopes: t.String(),
  roleClaim: t.Union([t.String(), t.Null()]),
  roleMapping: t.Array(t.Object({ value: t.String(), role: t.String(), workspaceId: t.Optional(Uuid) })),
  defaultRole: t.String(),
  ssoOnly: t.Boolean(),
  workspaceId: Uuid,
  redirectPath: t.String({ description: "append to WEFT_PUBLIC_URL: the redirect URI to register at the provider" }),
  createdAt: DateTime,
  updatedAt: DateTime,
});
