/** Roles, members and invitations of the caller's workspace (Settings → Members; docs/teams.md). */
import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { sessionCookieHeader } from "./identity";
import { Data, IdParams, List } from "../schema/common";
import {
  Invitation,
  InvitationAcceptBody,
  InvitationCreateBody,
  InvitationCreated,
  InvitationPreview,
  InvitationTokenBody,
  Member,
  MemberParams,
  MemberRoleBody,
  Role,
} from "../schema/identity";
import { rolesView } from "../core/members";

const tags = ["Members"];

export const membersApi = ({ members, sso, security, config }: AppDeps) => {
  const secure = config.publicUrl.startsWith("https:");
  return new Elysia({ name: "api-members" })
    .use(security)
    .get(
      "/api/roles",
      () => {
        const roles = rolesView();
        return { data: roles, total: roles.length };
      },
      { permission: "authenticated", response: List(Role), detail: { tags, summary: "The roles a member can have and the scopes of each" } },
    )
    .get(
      "/api/members",
      async ({ auth }) => {
        const list = await members.list(auth.workspaceId);
        return { data: list, total: list.length };
      },
      { permission: "authenticated", response: List(Member), detail: { tags, summary: "The members of the caller's workspace with their role" } },
    )
    .put("/api/members/:userId/role", async ({ auth, params, body }) => ({ data: await members.setRole(auth, params.userId, body.role) }), {
      permission: "workspace:admin",
      params: MemberParams,
      body: MemberRoleBody,
      response: Data(Member),
      detail: { tags, summary: "Change a member's role (not the owner's: ownership moves by transfer); their tokens follow at the next call" },
    })
    .post("/api/members/:userId/deactivate", async ({ auth, params }) => ({ data: await members.deactivate(auth, params.userId) }), {
      permission: "workspace:admin",
      params: MemberParams,
      response: Data(Member),
      detail: { tags, summary: "Deactivate a member: their sessions and API tokens stop working at once; what they built keeps running" },
    })
    .post("/api/members/:userId/activate", async ({ auth, params }) => ({ data: await members.activate(auth, params.userId) }), {
      permission: "workspace:admin",
      params: MemberParams,
      response: Data(Member),
      detail: { tags, summary: "Re-activate a deactivated member" },
    })
    .delete("/api/members/:userId", async ({ auth, params }) => ({ data: await members.remove(auth, params.userId) }), {
      permission: "workspace:admin",
      params: MemberParams,
      response: Data(Member),
      detail: { tags, summary: "Remove a member from the workspace; what they built stays the workspace's" },
    })
    .post("/api/members/:userId/ownership", async ({ auth, params }) => ({ data: await members.transferOwnership(auth, params.userId) }), {
      permission: "workspace:admin",
      params: MemberParams,
      response: Data(Member),
      detail: { tags, summary: "Transfer the workspace's ownership to an active member (owner only); the previous owner becomes admin" },
    })
    .get(
      "/api/invitations",
      async ({ auth }) => {
        const list = await members.pending(auth.workspaceId);
        return { data: list, total: list.length };
      },
      { permission: "workspace:admin", response: List(Invitation), detail: { tags, summary: "Pending invitations of the workspace" } },
    )
    .post(
      "/api/invitations",
      async ({ auth, body, set }) => {
        set.status = 201;
        return { data: await members.invite(auth, body) };
      },
      {
        permission: "workspace:admin",
        body: InvitationCreateBody,
        response: { 201: Data(InvitationCreated) },
        detail: { tags, summary: "Invite someone with a role: a single-use, expiring link, e-mailed when WEFT_SMTP_URL is set and returned once" },
      },
    )
    .delete("/api/invitations/:id", async ({ auth, params }) => ({ data: await members.revokeInvitation(auth.workspaceId, params.id) }), {
      permission: "workspace:admin",
      params: IdParams,
      response: Data(Invitation),
      detail: { tags, summary: "Revoke a pending invitation; its link stops working" },
    })
    .post("/api/invitations/preview", async ({ body }) => ({ data: await members.inspect(body.token) }), {
      permission: "public",
      body: InvitationTokenBody,
      response: Data(InvitationPreview),
      detail: { tags, summary: "What an invitation link offers (workspace, role, whether the e-mail has an account)" },
    })
    .post(
      "/api/invitations/accept",
      async ({ body, set }) => {
        // Accepting with a password is a password login: refused under "SSO only" like one (docs/teams.md).
        await sso.assertPasswordAllowed((await members.inspect(body.token)).email);
        const session = await members.accept(body);
        set.headers["set-cookie"] = sessionCookieHeader(session.sessionId, session.expiresAt, secure);
        set.status = 201;
        return { data: { user: session.user, workspaceId: session.workspaceId, csrfToken: session.csrfToken } };
      },
      {
        permission: "public",
        body: InvitationAcceptBody,
        detail: { tags, summary: "Accept an invitation: set a password (or give the existing account's) and join; sets the session cookie" },
      },
    );
};
