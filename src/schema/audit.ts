/** The audit log's events as the API serves them (docs/teams.md, "Audit log"). */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DateTime } from "./common";

const Nullable = <T extends ReturnType<typeof t.String>>(schema: T) => t.Union([schema, t.Null()]);

export const AuditEvent = t.Object(
  {
    id: t.String(),
    time: DateTime,
    workspaceId: t.String(),
    actor: t.Object({
      type: t.Union([t.Literal("user"), t.Literal("token"), t.Literal("anonymous")]),
      id: Nullable(t.String()),
      name: Nullable(t.String({ description: "the user's e-mail or the token's name" })),
    }),
    action: t.String({ description: "e.g. login.succeeded, member.role_changed, workflow.published, connection.updated" }),
    target: t.Union([t.Object({ type: t.String(), id: Nullable(t.String()), name: Nullable(t.String()) }), t.Null()]),
    details: t.Record(t.String(), t.Unknown(), { description: "what changed; never a secret" }),
    ip: Nullable(t.String({ description: "the caller's socket address" })),
    userAgent: Nullable(t.String()),
  },
  { $id: "AuditEvent" },
);

export const AuditList = t.Object({
  data: t.Array(AuditEvent),
  pagination: t.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer(), totalPages: Type.Integer() }),
});
