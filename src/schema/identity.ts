import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { SCOPES } from "./scopes";
import { ASSIGNABLE_ROLES, ROLE_NAMES } from "./roles";
import { DateTime, Uuid } from "./common";

export const Email = t.String({ format: "email", maxLength: 254 });
export const Password = t.String({ minLength: 8, maxLength: 200 });

export const SetupBody = t.Object(
  { email: Email, password: Password, name: t.Optional(t.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);
export const LoginBody = t.Object({ email: t.String({ maxLength: 254 }), password: t.String({ maxLength: 200 }) }, { additionalProperties: false });

// ---- sessions and the password (docs/teams.md, "Sessions") ----

export const Session = t.Object({
  id: Uuid,
  current: t.Boolean({ description: "the session this call was made with" }),
  workspaceId: Uuid,
  createdAt: DateTime,
  lastSeenAt: DateTime,
  expiresAt: DateTime,
  address: t.Union([t.String(), t.Null()], { description: "the client's address when it was last used (behind WEFT_TRUSTED_PROXIES: the forwarded one)" }),
  userAgent: t.Union([t.String(), t.Null()], { description: "the browser it was last used from" }),
});
export const SessionsRevoked = t.Object({ revoked: t.Integer({ description: "how many sessions ended" }) });
export const PasswordChangeBody = t.Object(
  { currentPassword: t.String({ minLength: 1, maxLength: 200 }), newPassword: Password },
  { additionalProperties: false },
);
export const PasswordChanged = t.Object({ changed: t.Boolean(), sessionsRevoked: t.Integer({ description: "your other sessions, ended" }) });

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

// ---- members and invitations (docs/teams.md) ----

export const AssignableRole = t.Union(
  ASSIGNABLE_ROLES.map((r) => t.Literal(r)),
  { description: `one of ${ASSIGNABLE_ROLES.join(", ")}` },
);
export const Role = t.Object({
  name: t.String({ description: `one of ${ROLE_NAMES.join(", ")}` }),
  description: t.String(),
  scopes: t.Array(t.String()),
  assignable: t.Boolean({ description: "false for owner: ownership moves by transfer" }),
});
export const Member = t.Object({
  userId: Uuid,
  email: t.String(),
  name: t.String(),
  role: t.String(),
  status: t.Union([t.Literal("active"), t.Literal("deactivated")]),
  deactivatedAt: t.Union([DateTime, t.Null()]),
  joinedAt: DateTime,
  scopes: t.Array(t.String(), { description: "the scopes of the member's role" }),
});
export const MemberParams = t.Object({ userId: Uuid });
export const MemberRoleBody = t.Object({ role: AssignableRole }, { additionalProperties: false });
export const Invitation = t.Object({
  id: Uuid,
  workspaceId: Uuid,
  email: t.String(),
  role: t.String(),
  invitedBy: t.Union([Uuid, t.Null()]),
  createdAt: DateTime,
  expiresAt: DateTime,
});
export const InvitationCreated = t.Composite([
  Invitation,
  t.Object({
    token: t.String({ description: "the raw invitation token; shown once" }),
    link: t.String({ description: "the link to send; shown once" }),
    emailed: t.Boolean({ description: "whether an e-mail was sent (WEFT_SMTP_URL)" }),
  }),
]);
export const InvitationCreateBody = t.Object(
  { email: Email, role: AssignableRole, expiresInDays: t.Optional(Type.Integer({ minimum: 1, maximum: 30, description: "default 7" })) },
  { additionalProperties: false },
);
export const InvitationTokenBody = t.Object({ token: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const InvitationAcceptBody = t.Object(
  {
    token: t.String({ minLength: 1, maxLength: 200 }),
    password: Password,
    name: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "for a new account" })),
  },
  { additionalProperties: false },
);
export const InvitationPreview = t.Object({
  email: t.String(),
  role: t.String(),
  workspaceId: Uuid,
  workspaceName: t.String(),
  expiresAt: DateTime,
  hasAccount: t.Boolean({ description: "true: accept with that account's password; false: the password sets a new one" }),
});
