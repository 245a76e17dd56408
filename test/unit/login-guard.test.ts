/**
 * The login guard (docs/teams.md, "Login protection"): failed password checks counted per account and per
 * address; a right password gives its try back; the refusal is 429 with Retry-After, naming which limit held.
 */
import { expect, test } from "bun:test";
import { LoginGuard } from "../../src/api/middleware/login-guard";
import { AppError } from "../../src/http/errors";

const refusal = (work: () => unknown): AppError => {
  try {
    work();
  } catch (error) {
    return error as AppError;
  }
  throw new Error("was not refused");
};

test("one address trying many accounts is held back once it used up its tries", () => {
  const guard = new LoginGuard({ perAccount: { burst: 5, perMinute: 1 }, perAddress: { burst: 3, perMinute: 6 } });
  for (const email of ["a@example.com", "b@example.com", "c@example.com"]) guard.attempt(email, "198.51.100.7");
  const error = refusal(() => guard.attempt("d@example.com", "198.51.100.7"));
  expect(error.code).toBe("RATE_LIMITED");
  expect(error.status).toBe(429);
  expect(error.message).toContain("from this address");
  expect(Number(error.headers?.["retry-after"])).toBeGreaterThan(0);
  // Another address still may try that account.
  guard.attempt("d@example.com", "198.51.100.8");
});

test("an account's tries are counted whatever the case of the e-mail, and a right password does not count", () => {
  const guard = new LoginGuard({ perAccount: { burst: 2, perMinute: 1 }, perAddress: { burst: 100, perMinute: 6 } });
  for (let i = 0; i < 5; i++) guard.attempt("Owner@Example.com", `198.51.100.${i}`).succeeded();
  guard.attempt("owner@example.com", "198.51.100.20");
  guard.attempt("OWNER@example.com", "198.51.100.21");
  expect(refusal(() => guard.attempt("owner@example.com", "198.51.100.22")).message).toContain("for this account");
});
