/** docs/teams.md's table of roles is the data in src/schema/roles.ts: the same roles, in order, with the same scopes. */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROLES } from "../../src/schema/roles";

test("the roles table of docs/teams.md matches src/schema/roles.ts", () => {
  const doc = readFileSync(join(import.meta.dir, "../../docs/teams.md"), "utf8");
  const rows = [...doc.matchAll(/^\| `([a-z]+)` \| ((?:`[a-z]+:[a-z]+`(?:, )?)+) \| ([^|]+) \|$/gm)].map((m) => ({
    role: m[1],
    scopes: [...m[2]!.matchAll(/`([^`]+)`/g)].map((s) => s[1]).sort(),
    description: m[3]!.trim(),
  }));
  expect(rows).toEqual(Object.entries(ROLES).map(([role, { scopes, description }]) => ({ role, scopes: [...scopes].sort(), description })));
});
