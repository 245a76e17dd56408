/** Roles, members and invitations of the caller's workspace (Settings → Members; docs/teams.md). */
import { Elysia, type Static } from "elysia";
import type { AppDeps } from "./deps";
import { secureCookie, sessionCookieHeader } from "./identity";
import { routeOptions } from "./route-options";
import { wholeList } from "../schema/common";
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
import { addressOf, audited, type CallContext, userAgentOf } from "./audit";

const route = routeOptions(["Members"]);

export const membersApi = ({ members, sso, secondFactor, identity, security, config, audit, loginGuard }: AppDeps) => {
  /** A member an admin just changed: audited as `action` with the role they have now, and answered. */
  const changed = (ctx: CallContext, action: string, member: Static<typeof Member>) =>
    audited(audit, ctx, member, action, { type: "member", id: member.userId, name: member.email }, { role: member.role });
  /** An invitation an admin just made or revoked: audited as `action` with its role and `details`, and answered. */
  const invitationChanged = <T extends { id: string; email: string; role: string }>(ctx: CallContext, action: string, invitation: T, details = {}) =>
    audited(audit, ctx, invitation, action, { type: "invitation", id: invitation.id, name: invitation.email }, { role: invitation.role, ...details });
  /** The options of a route that changes one member: admins only, answering the member. */
  const memberChange = (summary: string) => ({ permission: "workspace:admin" as const, ...route.answer(Member, summary), params: MemberParams });

  return new Elysia({ name: "api-members" })
    .use(security)
    .get("/api/roles", () => wholeList(rolesView()), { permission: "authenticated", ...route.list(Role, "The roles a member can have and the scopes of each") })
    .get("/api/members", async ({ auth }) => wholeList(await members.list(auth.workspaceId)), {
      permission: "authenticated",
      ...route.list(Member, "The members of the caller's workspace with their role"),
    })
    .put("/api/members/:userId/role", async (ctx) => changed(ctx, "member.role_changed", await members.setRole(ctx.auth, ctx.params.userId, ctx.body.role)), {
      ...memberChange("Change a member's role (not the owner's: ownership moves by transfer); their tokens follow at the next call"),
      body: MemberRoleBody,
    })
    .post(
      "/api/members/:userId/deactivate",
      async (ctx) => changed(ctx, "member.deactivated", await members.deactivate(ctx.auth, ctx.params.userId)),
      memberChange("Deactivate a member: their sessions and API tokens stop working at once; what they built keeps running"),
    )
    .post(
      "/api/members/:userId/activate",
      async (ctx) => changed(ctx, "member.activated", await members.activate(ctx.auth, ctx.params.userId)),
      memberChange("Re-activate a deactivated member"),
    )
    .delete(
      "/api/members/:userId",
      async (ctx) => changed(ctx, "member.removed", await members.remove(ctx.auth, ctx.params.userId)),
      memberChange("Remove a member from the workspace; what they built stays the workspace's"),
    )
    .post(
      "/api/members/:userId/ownership",
      async (ctx) => changed(ctx, "member.ownership_transferred", await members.transferOwnership(ctx.auth, ctx.params.userId)),
      memberChange("Transfer the workspace's ownership to an active member (owner only); the previous owner becomes admin"),
    )
    .get("/api/invitations", async ({ auth }) => wholeList(await members.pending(auth.workspaceId)), {
      permission: "workspace:admin",
      ...route.list(Invitation, "Pending invitations of the workspace"),
    })
    .post(
      "/api/invitations",
      async (ctx) => {
        const invitation = await members.invite(ctx.auth, ctx.body);
        ctx.set.status = 201;
        return invitationChanged(ctx, "invitation.created", invitation, { expiresAt: invitation.expiresAt, emailed: invitation.emailed });
      },
      {
        permission: "workspace:admin",
        ...route.creates(InvitationCreated, "Invite someone with a role: a single-use, expiring link, e-mailed when WEFT_SMTP_URL is set and returned once"),
        body: InvitationCreateBody,
      },
    )
    .delete(
      "/api/invitations/:id",
      async (ctx) => invitationChanged(ctx, "invitation.revoked", await members.revokeInvitation(ctx.auth.workspaceId, ctx.params.id)),
      { permission: "workspace:admin", ...route.byId(Invitation, "Revoke a pending invitation; its link stops working") },
    )
    .post("/api/invitations/preview", async ({ body }) => ({ data: await members.inspect(body.token) }), {
      permission: "public",
      ...route.answer(InvitationPreview, "What an invitation link offers (workspace, role, whether the e-mail has an account)"),
      body: InvitationTokenBody,
    })
    .post(
      "/api/invitations/accept",
      async ({ body, set, request, server }) => {
        // Accepting with a password is a password login: refused under "SSO only", alike for every e-mail (docs/teams.md).
        await sso.assertPasswordAllowed(null);
        const invitation = await members.inspect(body.token);
        const ip = addressOf(request, server);
        // An existing account proves itself with its password: counted as a login's is (docs/teams.md, "Login protection").
        const attempt = invitation.hasAccount ? loginGuard.attempt(invitation.email, ip) : null;
        const session = await members.accept(body);
        attempt?.succeeded();
        const who = { type: "user" as const, id: session.user.id, name: session.user.email };
        await audit.record({ actor: who, workspaceId: session.workspaceId, ip, userAgent: userAgentOf(request) }, "invitation.accepted", {
          type: "member",
          id: who.id,
          name: who.name,
        });
        set.status = 201;
        // An existing account with a second factor joined, but its password alone opens no session (docs/teams.md).
        if (await secondFactor.isOn(session.user.id)) {
          await identity.logout(session.sessionId);
          return { data: { secondFactorRequired: true, ...(await secondFactor.startLogin((await identity.user(session.user.id))!)) } };
        }
        set.headers["set-cookie"] = sessionCookieHeader(session.sessionId, session.expiresAt, secureCookie(config.publicUrl, request));
        return { data: { user: session.user, workspaceId: session.workspaceId, csrfToken: session.csrfToken } };
      },
      {
        permission: "public",
        body: InvitationAcceptBody,
        detail: route.detail("Accept an invitation: set a password (or give the existing account's) and join; sets the session cookie"),
      },
    );
};
