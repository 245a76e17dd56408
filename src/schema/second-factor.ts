/** A second factor for password logins (docs/teams.md, "Second factor"). */
import { t } from "elysia";
import { DateTime, Uuid } from "./common";

const Code = t.String({ minLength: 6, maxLength: 20, description: "the 6-digit code the authenticator app shows now" });
const RecoveryCode = t.String({ minLength: 8, maxLength: 40, description: "one of the recovery codes shown at enrolment (dashes and case do not matter)" });

export const SecondFactorStatus = t.Object({
  enabled: t.Boolean({ description: "a confirmed second factor is on; password logins ask for a code" }),
  pending: t.Boolean({ description: "an enrolment was started and not confirmed yet" }),
  enabledAt: t.Union([DateTime, t.Null()]),
  recoveryCodesLeft: t.Integer({ minimum: 0 }),
  requiredBy: t.Array(Uuid, { description: "the caller's workspaces whose owner requires a second factor" }),
  requiredHere: t.Boolean({ description: "the session's workspace requires one" }),
  mustEnrol: t.Boolean({ description: "this session may do nothing but enrol until a second factor is on" }),
});

export const SecondFactorEnrolment = t.Object({
  secret: t.String({ description: "the TOTP secret in base32, to type into an authenticator app" }),
  uri: t.String({ description: "the otpauth:// URI (what a QR code would hold)" }),
  issuer: t.String(),
  label: t.String(),
  digits: t.Integer(),
  period: t.Integer({ description: "seconds" }),
  algorithm: t.String(),
});

const UserSummary = t.Object({ id: Uuid, email: t.String(), name: t.String(), role: t.String(), orgId: Uuid });

export const RecoveryCodes = t.Object({
  user: UserSummary,
  recoveryCodes: t.Array(t.String(), { description: "shown this once; each works once; only their hashes are stored" }),
});

export const ConfirmBody = t.Object({ code: Code }, { additionalProperties: false });

export const ProofBody = t.Object(
  {
    code: t.Optional(Code),
    password: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "the account's password, instead of a code" })),
  },
  { additionalProperties: false, description: "a current code or the account's password" },
);

export const SecondStepBody = t.Object(
  {
    ticket: t.String({ minLength: 1, maxLength: 200, description: "the ticket POST /api/auth/login answered" }),
    code: t.Optional(Code),
    recoveryCode: t.Optional(RecoveryCode),
  },
  { additionalProperties: false, description: "the ticket with a code or a recovery code" },
);

export const SecondFactorRequirement = t.Object({ workspaceId: Uuid, required: t.Boolean() });
export const SecondFactorRequirementBody = t.Object(
  { required: t.Boolean({ description: "true: every member's browser session must have a second factor" }) },
  { additionalProperties: false },
);
