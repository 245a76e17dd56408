/**
 * Role × route, from the OpenAPI contract (docs/teams.md): for every operation and every role, a token of a member
 * with that role is let in exactly when the operation's `x-permission` is one of the role's scopes; a refusal is
 * 403 FORBIDDEN naming the scope, the role and the roles that would allow it. The operations come from the served
 * contract, so a new route cannot be forgotten. The tokens were minted with every scope while their members were
 * admins; each member's role was then changed, so what is checked is the clamp at call time.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { ROLES, ROLE_NAMES, type RoleName } from "../../src/schema/roles";
import { testApp, type TestApp } from "../support/app";
import { join, mint, setRole, setUpOwner } from "./support";

const SOME_ID = "0190a0b0-0000-7000-8000-000000000001";

let t: TestApp;
const tokens = new Map<RoleName, string>();
let operations: Array<{ method: string; path: string; permission: string }> = [];

beforeAll(async () => {
  t = await testApp();
  const owner = await setUpOwner(t);
  const ownerToken = await mint(t, owner, "all");
  expect(ownerToken.status).toBe(201);
  tokens.set("owner", ownerToken.body.data.token);
  for (const role of ROLE_NAMES.filter((r) => r !== "owner")) {
    const person = await join(t, `${role}@example.com`, "admin");
    const minted = await mint(t, person, "all");
    expect(minted.status).toBe(201);
    tokens.set(role, minted.body.data.token);
    await setRole(t, person.userId, role);
  }
  const contract = await t.req("GET", "/api/openapi.json");
  for (const [path, item] of Object.entries<any>(contract.body.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      operations.push({ method: method.toUpperCase(), path, permission: operation["x-permission"] });
    }
  }
});

describe("role × route matrix from the contract", () => {
  test("the contract lists the operations, each with its x-permission", () => {
    expect(operations.length).toBeGreaterThan(80);
    expect(operations.every((op) => typeof op.permission === "string")).toBe(true);
    operations = operations.filter((op) => op.permission !== "public");
  });

  test("every role: allowed exactly when the route's scope is in the role's scopes", async () => {
    const wrong: string[] = [];
    let refused = 0;
    let allowed = 0;
    for (const role of ROLE_NAMES) {
      const scopes = new Set<string>(ROLES[role].scopes);
      for (const op of operations) {
        const path = op.path.replace(/\{[^}]+\}/g, SOME_ID);
        // An unknown key: strict bodies refuse it with 400 after the scope was checked, so no call changes anything.
        const body = op.method === "GET" || op.method === "HEAD" ? undefined : { weftRoleMatrix: true };
        const res = await t.req(op.method, path, { token: tokens.get(role)!, body });
        const scopeRefusal = res.status === 403 && res.body?.error?.details?.scope !== undefined;
        const expectAllowed = op.permission === "authenticated" || scopes.has(op.permission);
        if (expectAllowed) {
          allowed++;
          if (res.status === 401 || scopeRefusal) wrong.push(`${role} ${op.method} ${op.path} (${op.permission}): ${res.status} ${res.text.slice(0, 160)}`);
        } else {
          refused++;
          const error = res.body?.error;
          const ok =
            res.status === 403 &&
            error?.code === "FORBIDDEN" &&
            error.details?.scope === op.permission &&
            error.details?.role === role &&
            error.message.includes(`"${op.permission}"`) &&
            error.message.includes(`your role ${role}`) &&
            JSON.stringify(error.details.rolesAllowing) ===
              JSON.stringify(ROLE_NAMES.filter((r) => (ROLES[r].scopes as readonly string[]).includes(op.permission)));
          if (!ok) wrong.push(`${role} ${op.method} ${op.path} (${op.permission}) should be refused: ${res.status} ${res.text.slice(0, 160)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    // Every role is refused somewhere but the owner and admin, and allowed somewhere.
    expect(allowed).toBeGreaterThan(operations.length * 2);
    expect(refused).toBeGreaterThan(operations.length);
  });
});
