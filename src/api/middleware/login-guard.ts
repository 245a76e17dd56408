/**
 * Password guessing (docs/teams.md, "Login protection"): failed password checks are counted per account (the
 * e-mail as typed, lower-cased, whether or not an account has it, so the answer says nothing about which
 * e-mails exist) and per client address, in token buckets like the API's rate limits (./rate-limit.ts). A
 * check that succeeds gives its token back, so only failures count.
 *   const attempt = guard.attempt(email, address); // throws 429 RATE_LIMITED when either bucket is empty
 *   if (passwordRight) attempt.succeeded(); // a failed check keeps its token spent
 * Middleware, not a route: it has no scope of its own (`x-permission` is declared by each route that checks a
 * password: login, password change, invitation accept).
 */
import { AppError } from "../../http/errors";
import type { Clock } from "../../lib/clock";
import { TokenBuckets } from "./rate-limit";

export interface LoginGuardOptions {
  /** Failed checks an account may have in a row (default 10), and how many come back per minute (default 1). */
  perAccount?: { burst: number; perMinute: number };
  /** Failed checks one address may have in a row (default 30), and how many come back per minute (default 6). */
  perAddress?: { burst: number; perMinute: number };
  /** What tries come back by (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
}

export interface LoginAttempt {
  /** The password was right: this try does not count. */
  succeeded(): void;
}

export class LoginGuard {
  private readonly accounts: TokenBuckets;
  private readonly addresses: TokenBuckets;

  constructor(options: LoginGuardOptions = {}) {
    const account = options.perAccount ?? { burst: 10, perMinute: 1 };
    const address = options.perAddress ?? { burst: 30, perMinute: 6 };
    this.accounts = new TokenBuckets(account.perMinute / 60, account.burst, undefined, options.clock);
    this.addresses = new TokenBuckets(address.perMinute / 60, address.burst, undefined, options.clock);
  }

  /** Counts a password check for `email` from `address`; refused (429) when either has used up its tries. */
  attempt(email: string, address: string | null): LoginAttempt {
    const addressKey = address ?? "in-process";
    const accountKey = email.trim().toLowerCase();
    const byAddress = this.addresses.take(addressKey);
    if (!byAddress.allowed) throw limited("from this address", byAddress.retryAfterSeconds);
    const byAccount = this.accounts.take(accountKey);
    if (!byAccount.allowed) {
      this.addresses.giveBack(addressKey);
      throw limited("for this account", byAccount.retryAfterSeconds);
    }
    return {
      succeeded: () => {
        this.addresses.giveBack(addressKey);
        this.accounts.giveBack(accountKey);
      },
    };
  }
}

function limited(where: string, retryAfterSeconds: number) {
  return new AppError(
    "RATE_LIMITED",
    `too many failed password checks ${where}; retry after ${retryAfterSeconds} s (docs/teams.md, "Login protection")`,
    { retryAfterSeconds },
    undefined,
    { "retry-after": String(retryAfterSeconds) },
  );
}
