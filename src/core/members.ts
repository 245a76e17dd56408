/**
 * Members of a workspace and invitations to one (docs/teams.md). The owner and admins invite people with a
 * single-use, expiring link (e-mailed when WEFT_SMTP_URL is set, always shown once to copy), change roles,
 * deactivate, re-activate and remove members; the owner transfers ownership. A change that narrows what a
 * member may do holds from their next call on: sessions read their membership at each call, and bearer
 * principals are dropped from every instance's cache (Identity.credentialsChanged).
 */
import { AppError, notFound } from "../http/errors";
import { isStorageError } from "../lib/storage-error";
import { newId, newSecret, sha256 } from "../lib/ids";
import { ASSIGNABLE_ROLES, ROLES, ROLE_NAMES, isRole, type RoleName } from "../schema/roles";
import { nowIso } from "../store/db";
import type { InvitationRow, MemberWithUserRow, UserRow } from "../store/identity";
import type { Storage } from "../store/port";
import type { Identity, Principal } from "./identity";

/** How long an invitation link works unless the inviter says otherwise. */
export const INVITATION_DAYS = 7;

export interface InvitationMail {
  to: string;
  workspaceName: string;
  role: RoleName;
  link: string;
  expiresAt: string;
}

/** Sends an invitation e-mail; absent when WEFT_SMTP_URL is unset. */
export type InvitationMailer = (mail: InvitationMail) => Promise<void>;

/** The mailer for WEFT_SMTP_URL (nodemailer, loaded with the first invitation that is sent). */
export function smtpInvitationMailer(smtpUrl: string, from: string): InvitationMailer {
  let transport: Promise<import("nodemailer").Transporter> | undefined;
  return async (mail) => {
    transport ??= import("nodemailer").then((nodemailer) => nodemailer.createTransport(smtpUrl));
    await (await transport).sendMail({
      from,
      to: mail.to,
      subject: `You are invited to the Weft workspace ${mail.workspaceName}`,
      text:
        `You are invited to join the Weft workspace "${mail.workspaceName}" as ${mail.role}.\n\n` +
        `Open this link to accept (it works once, until ${mail.expiresAt}):\n${mail.link}\n`,
    });
  };
}

const memberView = (row: MemberWithUserRow) => ({
  userId: row.user_id,
  email: row.email,
  name: row.name,
  role: row.role,
  status: row.deactivated_at === null ? ("active" as const) : ("deactivated" as const),
  deactivatedAt: row.deactivated_at,
  joinedAt: row.created_at,
  scopes: isRole(row.role) ? [...ROLES[row.role].scopes] : [],
});

const invitationView = (row: InvitationRow) => ({
  id: row.id,
  workspaceId: row.workspace_id,
  email: row.email,
  role: row.role,
  invitedBy: row.invited_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

export const rolesView = () =>
  ROLE_NAMES.map((name) => ({ name, description: ROLES[name].description, scopes: [...ROLES[name].scopes], assignable: name !== "owner" }));

export interface MembersOptions {
  storage: Storage;
  identity: Identity;
  publicUrl: string;
  mailer?: InvitationMailer;
  /** Where a failed e-mail is reported (the invitation is made anyway; its link is shown). */
  onMailError?: (error: Error) => void;
}

export class Members {
  constructor(private readonly o: MembersOptions) {}

  async list(workspaceId: string) {
    return (await this.o.storage.identity.membersOfWorkspace(workspaceId)).map(memberView);
  }

  private async target(workspaceId: string, userId: string) {
    const member = (await this.o.storage.identity.membersOfWorkspace(workspaceId)).find((m) => m.user_id === userId);
    if (!member) throw notFound(`member ${userId} of this workspace`);
    return member;
  }

  /** The owner's membership is changed only by a transfer; one's own is not deactivated or removed by oneself. */
  private async changeable(actor: Principal, userId: string, what: string) {
    const member = await this.target(actor.workspaceId, userId);
    if (member.role === "owner") {
      throw new AppError("FORBIDDEN", `cannot ${what} the workspace's owner; the owner first transfers ownership (POST /api/members/{userId}/ownership)`);
    }
    if (what !== "change the role of" && actor.userId === userId) throw new AppError("FORBIDDEN", `cannot ${what} yourself; another admin can`);
    return member;
  }

  async setRole(actor: Principal, userId: string, role: string) {
    if (!isRole(role) || role === "owner") {
      throw new AppError("VALIDATION_FAILED", `role "${role}" cannot be given; roles: ${ASSIGNABLE_ROLES.join(", ")} (ownership moves by transfer)`);
    }
    await this.changeable(actor, userId, "change the role of");
    await this.o.storage.identity.setMemberRole(actor.workspaceId, userId, role);
    this.o.identity.credentialsChanged();
    return this.target(actor.workspaceId, userId).then(memberView);
  }

  async deactivate(actor: Principal, userId: string) {
    const member = await this.changeable(actor, userId, "deactivate");
    if (member.deactivated_at === null) {
      await this.o.storage.identity.setMemberDeactivated(actor.workspaceId, userId, nowIso());
      this.o.identity.credentialsChanged();
    }
    return this.target(actor.workspaceId, userId).then(memberView);
  }

  async activate(actor: Principal, userId: string) {
    const member = await this.changeable(actor, userId, "re-activate");
    if (member.deactivated_at !== null) {
      await this.o.storage.identity.setMemberDeactivated(actor.workspaceId, userId, null);
      this.o.identity.credentialsChanged();
    }
    return this.target(actor.workspaceId, userId).then(memberView);
  }

  /** The user leaves the workspace; its workflows and runs stay the workspace's, and keep running. */
  async remove(actor: Principal, userId: string) {
    const member = await this.changeable(actor, userId, "remove");
    await this.o.storage.identity.deleteMember(actor.workspaceId, userId);
    this.o.identity.credentialsChanged();
    return memberView(member);
  }

  /** The owner (or a token no user minted) makes an active member owner; the previous owner becomes admin. */
  async transferOwnership(actor: Principal, userId: string) {
    if (actor.role !== undefined && actor.role !== "owner") {
      throw new AppError("FORBIDDEN", `only the workspace's owner can transfer ownership; your role is ${actor.role}`, {
        role: actor.role,
        rolesAllowing: ["owner"],
      });
    }
    const next = await this.target(actor.workspaceId, userId);
    if (next.deactivated_at !== null) throw new AppError("CONFLICT", `member ${userId} is deactivated; re-activate them before making them owner`);
    if (next.role === "owner") return memberView(next);
    const owners = (await this.o.storage.identity.membersOfWorkspace(actor.workspaceId)).filter((m) => m.role === "owner");
    await this.o.storage.atomically(async (unit) => {
      for (const owner of owners) await unit.identity.setMemberRole(actor.workspaceId, owner.user_id, "admin");
      await unit.identity.setMemberRole(actor.workspaceId, userId, "owner");
    });
    this.o.identity.credentialsChanged();
    return this.target(actor.workspaceId, userId).then(memberView);
  }

  // ---- invitations ----

  /** Mints an invitation; its raw token and link are returned here once and never again. */
  async invite(actor: Principal, input: { email: string; role: string; expiresInDays?: number }) {
    if (!isRole(input.role) || input.role === "owner") {
      throw new AppError("VALIDATION_FAILED", `role "${input.role}" cannot be given by invitation; roles: ${ASSIGNABLE_ROLES.join(", ")}`);
    }
    const workspace = await this.o.identity.workspaceOf(actor.orgId, actor.workspaceId);
    const existing = await this.o.storage.identity.userByEmail(input.email);
    if (existing && existing.org_id !== actor.orgId) throw new AppError("CONFLICT", `${input.email} belongs to another organisation of this installation`);
    if (existing && (await this.o.storage.identity.member(workspace.id, existing.id))) {
      throw new AppError("CONFLICT", `${input.email} is already a member of this workspace; change their role or re-activate them instead`);
    }
    const raw = newSecret("weft_inv_");
    const now = new Date();
    const row = {
      id: newId(),
      org_id: actor.orgId,
      workspace_id: workspace.id,
      email: input.email,
      role: input.role,
      token_hash: sha256(raw),
      invited_by: actor.userId,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + (input.expiresInDays ?? INVITATION_DAYS) * 86_400_000).toISOString(),
    };
    await this.o.storage.identity.insertInvitation(row);
    const link = `${this.o.publicUrl}/#/invite/${raw}`;
    let emailed = false;
    if (this.o.mailer) {
      try {
        await this.o.mailer({ to: row.email, workspaceName: workspace.name, role: input.role, link, expiresAt: row.expires_at });
        emailed = true;
      } catch (error) {
        this.o.onMailError?.(error as Error);
      }
    }
    return { ...invitationView({ ...row, accepted_at: null, accepted_by: null, revoked_at: null }), token: raw, link, emailed };
  }

  async pending(workspaceId: string) {
    return (await this.o.storage.identity.pendingInvitations(workspaceId, nowIso())).map(invitationView);
  }

  async revokeInvitation(workspaceId: string, id: string) {
    const row = await this.o.storage.identity.invitation(id, workspaceId);
    if (!row || row.revoked_at || row.accepted_at) throw notFound(`pending invitation ${id}`);
    await this.o.storage.identity.revokeInvitation(id, nowIso());
    return invitationView(row);
  }

  /** The invitation a raw token names, while it can still be accepted; otherwise why not. */
  private async usable(raw: string) {
    const row = await this.o.storage.identity.invitationByHash(sha256(raw));
    if (!row || row.revoked_at) throw notFound("invitation (unknown or revoked link)");
    if (row.accepted_at) throw new AppError("CONFLICT", "this invitation was already used; ask a workspace admin for a new one");
    if (row.expires_at <= nowIso()) throw new AppError("CONFLICT", `this invitation expired at ${row.expires_at}; ask a workspace admin for a new one`);
    return row;
  }

  /** What the accept page shows: the workspace, the role, and whether the e-mail already has an account. */
  async inspect(raw: string) {
    const row = await this.usable(raw);
    const workspace = (await this.o.storage.identity.workspace(row.workspace_id, row.org_id))!;
    const user = await this.o.storage.identity.userByEmail(row.email);
    return { email: row.email, role: row.role, workspaceId: workspace.id, workspaceName: workspace.name, expiresAt: row.expires_at, hasAccount: user !== null };
  }

  /**
   * Joins the workspace: a new account sets its password; an existing one proves it with its password. The
   * token works once, even when two accepts race (the conditional update decides). Returns a new session.
   */
  async accept(input: { token: string; password: string; name?: string }) {
    const row = await this.usable(input.token);
    let user = await this.o.storage.identity.userByEmail(row.email);
    let newUser: UserRow | null = null;
    if (user) {
      if (!(await this.o.identity.verifyPassword(user, input.password))) {
        throw new AppError("UNAUTHORIZED", `${row.email} already has an account: accept with its password`);
      }
    } else {
      newUser = {
        id: newId(),
        org_id: row.org_id,
        email: row.email,
        name: input.name ?? row.email.split("@")[0],
        password_hash: await Bun.password.hash(input.password, { algorithm: "argon2id" }),
        role: "member",
        default_workspace_id: row.workspace_id,
        created_at: nowIso(),
      };
      user = newUser;
    }
    const joined = user;
    try {
      await this.o.storage.atomically(async (unit) => {
        if (!(await unit.identity.acceptInvitation(row.id, nowIso(), joined.id))) {
          throw new AppError("CONFLICT", "this invitation was already used; ask a workspace admin for a new one");
        }
        if (newUser) await unit.identity.insertUser(newUser);
        if (!(await unit.identity.member(row.workspace_id, joined.id))) {
          await unit.identity.insertMember({ workspace_id: row.workspace_id, user_id: joined.id, role: row.role, deactivated_at: null, created_at: nowIso() });
        }
      });
    } catch (error) {
      if (isStorageError(error, "unique"))
        throw new AppError("CONFLICT", `an account for ${row.email} was created meanwhile; open the link again and use its password`);
      throw error;
    }
    return this.o.identity.openSession(joined, row.workspace_id);
  }
}
