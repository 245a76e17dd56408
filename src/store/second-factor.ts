/**
 * A second factor for password logins (docs/teams.md, "Second factor"): the rows of migration 30 and what the storage
 * port (./port.ts) answers about them. Implemented by ./sqlite/second-factor.ts and ./postgres/second-factor.ts.
 */

/** A user's TOTP: `secret` is a SecretBox blob; pending while `confirmed_at` is null. */
export interface SecondFactorRow {
  user_id: string;
  secret: string;
  confirmed_at: string | null;
  /** The last time step a code was accepted for (null before the first). */
  last_step: number | null;
  created_at: string;
}

/** A login whose password was right, waiting for its code. */
export interface SecondFactorLoginRow {
  ticket_hash: string;
  user_id: string;
  failures: number;
  expires_at: string;
}

export interface SecondFactorRepository {
  factor(userId: string): Promise<SecondFactorRow | null>;
  /** Writes a new pending factor for the user, replacing a pending one (never a confirmed one: false then). */
  putPending(row: SecondFactorRow): Promise<boolean>;
  /** Confirms the pending factor with the step of its first code; false when there was none pending. */
  confirm(userId: string, at: string, step: number): Promise<boolean>;
  /**
   * Records `step` as the last one accepted, only if it is later than the recorded one; false when it is not (a
   * code used already, or an earlier one): a code works once even when two instances get it at the same time.
   */
  useStep(userId: string, step: number): Promise<boolean>;
  /** Deletes the factor and the recovery codes. */
  remove(userId: string): Promise<void>;
  /** Replaces the user's recovery codes with these hashes. */
  replaceRecoveryCodes(userId: string, hashes: string[], at: string): Promise<void>;
  /** Marks the code used unless it already was; true when this call did (single use under races). */
  useRecoveryCode(userId: string, hash: string, at: string): Promise<boolean>;
  /** How many of the user's recovery codes are not used yet. */
  recoveryCodesLeft(userId: string): Promise<number>;
  insertLogin(row: SecondFactorLoginRow): Promise<void>;
  /** The waiting login of that ticket unless expired at `now`; drops expired ones. */
  login(ticketHash: string, now: string): Promise<SecondFactorLoginRow | null>;
  /** Deletes it; true when this call did (a ticket finishes one login). */
  takeLogin(ticketHash: string): Promise<boolean>;
  /** Counts a wrong code against the ticket; answers the count now. */
  failLogin(ticketHash: string): Promise<number>;
  /** Whether the workspace's owner requires a second factor. */
  required(workspaceId: string): Promise<boolean>;
  setRequired(workspaceId: string, required: boolean, by: string | null, at: string): Promise<void>;
  /** Of the user's active memberships, the workspaces requiring a second factor. */
  requiringWorkspaces(userId: string): Promise<string[]>;
  /**
   * Whether the session must enrol before doing anything in the workspace: it requires a second factor, the user has
   * no confirmed one, and the session did not come from single sign-on (no `sso_sessions` row of its hash: the
   * provider asks for its own factors). One indexed read, asked at each call of a browser session.
   */
  mustEnrol(workspaceId: string, userId: string, sessionHash: string): Promise<boolean>;
}
