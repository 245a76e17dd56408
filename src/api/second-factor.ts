/**
 * A second factor for password logins (docs/teams.md, "Second factor"): enrolment, confirmation (recovery codes shown
 * once), removal, new recovery codes, the login's second step, and the workspace owner's requirement.
 */
import { Elysia, type TSchema } from "elysia";
import type { AppDeps } from "./deps";
import { addressOf, audited, auditOf, type CallContext, userAgentOf } from "./audit";
import { routeOptions } from "./route-options";
import { secureCookie, sessionCookieHeader } from "./identity";
import { TokenBuckets } from "./middleware/rate-limit";
import { AppError } from "../http/errors";
import {
  ConfirmBody,
  ProofBody,
  RecoveryCodes,
  SecondFactorEnrolment,
  SecondFactorRequirement,
  SecondFactorRequirementBody,
  SecondFactorStatus,
  SecondStepBody,
} from "../schema/second-factor";

const route = routeOptions(["Identity"]);

/**
 * Code attempts per account, on top of the per-address flood ceiling every login call counts against: ten at once,
 * then one a minute. A ticket also takes only five wrong codes (src/core/second-factor.ts), but a password holder can
 * ask for new tickets; this bounds the guesses an account gets whatever the tickets (per instance, as the other buckets).
 */
const ATTEMPTS_BURST = 10;
const ATTEMPTS_PER_SECOND = 1 / 60;
/** The workspace's requirement of a second factor, as the audit log names the setting. */
const REQUIREMENT_TARGET = { type: "settings", id: null, name: "second factor" };

export const secondFactorApi = ({ secondFactor, identity, security, config, audit }: AppDeps) => {
  const attempts = new TokenBuckets(ATTEMPTS_PER_SECOND, ATTEMPTS_BURST);
  /** The user whose own second factor a call is about, as the audit log names them. */
  const self = (user: { id: string; email: string }) => ({ type: "user", id: user.id, name: user.email });
  /** The options of a change to the caller's own second factor that needs proof: a current code or the password. */
  const withProof = <S extends TSchema>(schema: S, summary: string) => ({
    permission: "authenticated" as const,
    ...route.answer(schema, summary),
    body: ProofBody,
  });
  return new Elysia({ name: "api-second-factor" })
    .use(security)
    .get("/api/auth/second-factor", async ({ auth }) => ({ data: await secondFactor.status(auth) }), {
      permission: "authenticated",
      ...route.answer(SecondFactorStatus, "The caller's second factor: on or not, recovery codes left, the workspaces requiring one"),
    })
    .post("/api/auth/second-factor/enrol", async ({ auth }) => ({ data: await secondFactor.enrol(auth) }), {
      permission: "authenticated",
      ...route.answer(SecondFactorEnrolment, "Start enrolling a TOTP second factor: a new secret and its otpauth:// URI (nothing is on until confirmed)"),
    })
    .post(
      "/api/auth/second-factor/confirm",
      async (ctx) => {
        const confirmed = await secondFactor.confirm(ctx.auth, ctx.body.code);
        return audited(audit, ctx, confirmed, "second_factor.enrolled", self(confirmed.user), { method: "totp" });
      },
      {
        permission: "authenticated",
        ...route.answer(RecoveryCodes, "Turn the second factor on with the app's first code; answers the recovery codes, shown this once"),
        body: ConfirmBody,
      },
    )
    .post(
      "/api/auth/second-factor/disable",
      async (ctx) => {
        const removed = await refusedAudited(ctx, () => secondFactor.disable(ctx.auth, ctx.body));
        await auditOf(audit, ctx, "second_factor.removed", self(removed.user), { with: ctx.body.code ? "code" : "password" });
        return { data: await secondFactor.status(ctx.auth) };
      },
      withProof(SecondFactorStatus, "Turn the second factor off (and its recovery codes), with a current code or the password"),
    )
    .post(
      "/api/auth/second-factor/recovery-codes",
      async (ctx) => {
        const renewed = await refusedAudited(ctx, () => secondFactor.regenerateRecoveryCodes(ctx.auth, ctx.body));
        return audited(audit, ctx, renewed, "second_factor.recovery_codes_renewed", self(renewed.user));
      },
      withProof(RecoveryCodes, "New recovery codes, shown this once (the old ones stop working), with a current code or the password"),
    )
    .post(
      "/api/auth/login/second-factor",
      async ({ body, set, request, server }) => {
        if ((body.code === undefined) === (body.recoveryCode === undefined))
          throw new AppError("VALIDATION_FAILED", "give either code (the app's 6-digit code) or recoveryCode, not both and not neither");
        const user = await secondFactor.loginUser(body.ticket);
        const ip = addressOf(request, server);
        const who = {
          actor: { type: "anonymous" as const, id: null, name: user.email },
          workspaceId: user.default_workspace_id,
          ip,
          userAgent: userAgentOf(request),
        };
        const state = attempts.take(user.id);
        if (!state.allowed) {
          await audit.record(who, "second_factor.failed", self(user), { reason: "too many codes for this account" });
          throw new AppError(
            "RATE_LIMITED",
            `too many codes for this account (${ATTEMPTS_BURST}, then one a minute); retry after ${state.retryAfterSeconds} s`,
            undefined,
            undefined,
            { "retry-after": String(state.retryAfterSeconds) },
          );
        }
        const result = await secondFactor.finishLogin(body.ticket, body);
        if (!result.ok) {
          await audit.record(who, "second_factor.failed", self(user), { with: body.code !== undefined ? "code" : "recoveryCode" });
          throw new AppError("UNAUTHORIZED", result.message, { attemptsLeft: result.attemptsLeft });
        }
        const session = await identity.openSession(result.user, undefined, { address: ip, userAgent: userAgentOf(request) });
        if (result.method === "recovery")
          await audit.record(
            { ...who, actor: { type: "user", id: user.id, name: user.email }, workspaceId: session.workspaceId },
            "second_factor.recovery_code_used",
            self(user),
            {
              recoveryCodesLeft: result.recoveryCodesLeft,
            },
          );
        await audit.login(session.user.email, ip, userAgentOf(request), { userId: session.user.id, workspaceId: session.workspaceId });
        set.headers["set-cookie"] = sessionCookieHeader(session.sessionId, session.expiresAt, secureCookie(config.publicUrl, request));
        return {
          data: {
            user: session.user,
            workspaceId: session.workspaceId,
            csrfToken: session.csrfToken,
            method: result.method,
            recoveryCodesLeft: result.recoveryCodesLeft,
          },
        };
      },
      {
        permission: "public",
        body: SecondStepBody,
        detail: route.detail("The login's second step: the ticket with a code or a recovery code; sets the session cookie (a ticket finishes one login)"),
      },
    )
    .get("/api/settings/second-factor", async ({ auth }) => ({ data: await secondFactor.required(auth.workspaceId) }), {
      permission: "workspace:admin",
      ...route.answer(SecondFactorRequirement, "Whether the workspace requires a second factor of its members"),
    })
    .put(
      "/api/settings/second-factor",
      async (ctx) => {
        const requirement = await secondFactor.setRequired(ctx.auth, ctx.body.required);
        return audited(audit, ctx, requirement, "settings.changed", REQUIREMENT_TARGET, { secondFactorRequired: requirement.required });
      },
      {
        permission: "workspace:admin",
        ...route.answer(SecondFactorRequirement, "Require a second factor of every member of the workspace, or not (owner)"),
        body: SecondFactorRequirementBody,
      },
    );

  /** A wrong code or password given to change the factor is recorded as `second_factor.failed`, then refused. */
  async function refusedAudited<T>(ctx: CallContext, change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } catch (error) {
      if (error instanceof AppError && error.code === "FORBIDDEN" && (error.details as { field?: string } | undefined)?.field && ctx.auth.userId) {
        const user = await identity.user(ctx.auth.userId);
        if (user) await auditOf(audit, ctx, "second_factor.failed", self(user), { reason: error.message });
      }
      throw error;
    }
  }
};
