import { t } from "elysia";
import { SCOPES } from "./scopes";
import { DateTime, Uuid } from "./common";

export const Email = t.String({ format: "email", maxLength: 254 });
export const Password = t.String({ minLength: 8, maxLength: 200 });

export const SetupBody = t.Object(
  { email: Email, password: Password, name: t.Optional(t.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);
export const LoginBody = t.Object({ email: t.String({ maxLength: 254 }), password: t.String({ maxLength: 200 }) }, { additionalProperties: false });

export const ScopeName = t.Union(SCOPES.map((s) => t.Literal(s)));
export const TokenCreateBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100 }),
    scopes: t.Union([t.Literal("all"), t.Array(ScopeName, { minItems: 1 })], { description: `"all" or a list of: ${SCOPES.join(", ")}` }),
    workspaceId: t.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const Token = t.Object({
  id: Uuid,
  name: t.String(),
  scopes: t.Array(t.String()),
  prefix: t.String(),
  workspaceId: Uuid,
  createdAt: DateTime,
  lastUsedAt: t.Union([DateTime, t.Null()]),
});
export const TokenCreated = t.Composite([Token, t.Object({ token: t.String({ description: "the raw token; shown once" }) })]);

export const Workspace = t.Object({ id: Uuid, orgId: Uuid, name: t.String(), createdAt: DateTime });
export const WorkspaceCreateBody = t.Object({ name: t.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
