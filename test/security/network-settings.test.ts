/**
 * Settings → Network (GET/PUT /api/settings/network): stored, instance-wide allowed ranges that add to
 * WEFT_ALLOW_CIDRS. What an admin sees; strict validation (every bad entry named, with an example); only the
 * instance owner may change it; ranges survive a restart; each change is logged with who made it; and a
 * change is in force for the next step at once — on a worker thread and on the main thread — without a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { createLogger } from "../../src/http/logger";
import { newId } from "../../src/lib/ids";
import { ROOT_TOKEN, type TestApp, testApp } from "../support/app";
import { createWorkflow, definition, engineApp, httpGet, runAndWait, stepOf, stopEngines, testPiece } from "../engine/support";
import { loopback } from "../pieces/fake-context";
import { join as joinByInvitation } from "../teams/support";

const PATH = "/api/settings/network";

let listener: ReturnType<typeof loopback>;
beforeAll(() => {
  listener = loopback(() => Response.json({ reached: true }));
});
afterAll(async () => {
  listener.stop();
  await stopEngines();
});

/**
 * A browser session of a user (`role`) in the app's org, as the UI calls the API: the owner set up, or a workspace
 * admin who is not the instance owner, joined by invitation (docs/teams.md).
 */
async function sessionOf(t: TestApp, role: "owner" | "member"): Promise<{ headers: Record<string, string>; token: null; email: string }> {
  const email = `${role}-${newId().slice(0, 8)}@example.com`;
  if (role === "member") return { token: null, email, headers: (await joinByInvitation(t, email, "admin")).session };
  const password = "correct horse battery staple";
  await t.deps.identity.setupOwner({ email, password });
  const session = await t.deps.identity.login(email, password);
  return { token: null, email, headers: { cookie: `weft_session=${session.sessionId}`, "x-csrf-token": session.csrfToken } };
}

describe("what an admin sees", () => {
  test("the policy in plain words, the environment's ranges (read-only) and the stored ones with who and when", async () => {
    const t = await testApp({ WEFT_ALLOW_CIDRS: "192.168.1.0/24" });
    const before = await t.req("GET", PATH);
    expect(before.status).toBe(200);
    const policy = before.body.data;
    expect(policy.environment).toEqual({ variable: "WEFT_ALLOW_CIDRS", allowedCidrs: ["192.168.1.0/24"] });
    expect(policy.allowedRanges).toEqual([]);
    expect(policy.effective).toEqual(["192.168.1.0/24"]);
    expect(policy.alwaysRefused.addresses).toContain("169.254.169.254");
    expect(policy.alwaysRefused.names).toContain("metadata.google.internal");
    const defaults = policy.refusedByDefault.flatMap((group: { ranges: string[] }) => group.ranges);
    for (const range of ["127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "::1/128"]) expect(defaults).toContain(range);
    expect(policy.canChange).toBe(true);

    const put = await t.req("PUT", PATH, { body: { allowedCidrs: ["10.20.0.0/16", " FD12:3456::/48 "] } });
    expect(put.status).toBe(200);
    const stored = put.body.data.allowedRanges;
    expect(stored.map((r: { cidr: string }) => r.cidr)).toEqual(["10.20.0.0/16", "fd12:3456::/48"]);
    expect(stored[0].addedBy).toBe('API token "bootstrap" (weft_test_ro…)');
    expect(Date.parse(stored[0].addedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(put.body.data.effective).toEqual(["192.168.1.0/24", "10.20.0.0/16", "fd12:3456::/48"]);
    expect((await t.req("GET", PATH)).body.data).toEqual(put.body.data);
  });

  test("a kept range keeps who added it and when; the environment's ranges are not stored", async () => {
    const t = await testApp({ WEFT_ALLOW_CIDRS: "192.168.1.0/24" });
    const owner = await sessionOf(t, "owner");
    const first = await t.req("PUT", PATH, { ...owner, body: { allowedCidrs: ["10.20.0.0/16"] } });
    expect(first.body.data.allowedRanges[0].addedBy).toBe(owner.email);
    const second = await t.req("PUT", PATH, { body: { allowedCidrs: ["10.20.0.0/16", "10.30.0.0/16"] } });
    expect(second.body.data.allowedRanges).toEqual([
      first.body.data.allowedRanges[0],
      { cidr: "10.30.0.0/16", addedBy: 'API token "bootstrap" (weft_test_ro…)', addedAt: expect.any(String) },
    ]);
    const cleared = await t.req("PUT", PATH, { body: { allowedCidrs: [] } });
    expect(cleared.body.data.allowedRanges).toEqual([]);
    expect(cleared.body.data.effective).toEqual(["192.168.1.0/24"]);
  });
});

describe("strict validation: 400 naming the entry, with an example", () => {
  const table: Array<[string, string]> = [
    ["10.0.0.5", 'allowedCidrs[0]: "10.0.0.5" has no prefix length: write 10.0.0.5/32'],
    ["localhost", 'allowedCidrs[0]: "localhost" is not a CIDR range; write an address, a slash and a prefix length, e.g. 192.168.1.0/24'],
    ["127.1/8", "write IPv4 as four decimal numbers without leading zeros"],
    ["010.0.0.0/8", "write IPv4 as four decimal numbers without leading zeros"],
    ["10.0.0.0/33", "has a prefix longer than an IPv4 address (at most /32)"],
    ["fd00::/129", "has a prefix longer than an IPv6 address (at most /128)"],
    ["10.0.0.1/8", '"10.0.0.1/8" has address bits set past its prefix; the range is 10.0.0.0/8'],
    ["fd00::1/8", "the range is fd00::/8"],
    ["0.0.0.0/0", "is every address, which would turn the guard off"],
    ["::/0", "is every address, which would turn the guard off"],
    ["169.254.169.254/32", "is a cloud metadata address, which stays refused whatever is allowed"],
    ["10.0.0.0/08", "is not a CIDR range"],
  ];
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });

  for (const [entry, message] of table) {
    test(`"${entry}"`, async () => {
      const res = await t.req("PUT", PATH, { body: { allowedCidrs: [entry] } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_FAILED");
      expect(res.body.error.message).toContain(message);
      expect(res.body.error.details.problems[0]).toMatchObject({ path: "/allowedCidrs/0", value: entry });
    });
  }

  test("every bad entry of a list is named, and nothing is stored", async () => {
    const res = await t.req("PUT", PATH, { body: { allowedCidrs: ["10.0.0.0/8", "nope", "192.168.1.0/24", "1.2.3.4/40"] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toStartWith('allowedCidrs[1]: "nope" is not a CIDR range');
    expect(res.body.error.message).toContain('allowedCidrs[3]: "1.2.3.4/40"');
    expect(res.body.error.details.problems.map((p: { path: string }) => p.path)).toEqual(["/allowedCidrs/1", "/allowedCidrs/3"]);
    expect((await t.req("GET", PATH)).body.data.allowedRanges).toEqual([]);
  });

  test("the body's shape: an array of strings, nothing else", async () => {
    for (const body of [{}, { allowedCidrs: "10.0.0.0/8" }, { allowedCidrs: [10] }, { allowedCidrs: [], extra: true }]) {
      const res = await t.req("PUT", PATH, { body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.error.message).toMatch(/allowedCidrs|extra/);
    }
  });

  test("IPv6 ranges are stored in their short form, and a duplicate once", async () => {
    const res = await t.req("PUT", PATH, { body: { allowedCidrs: ["FD00:0:0:0::/8", "fd00::/8", "::ffff:10.0.0.0/104"] } });
    expect(res.status).toBe(200);
    // Ranges added together are listed in address order.
    expect(res.body.data.allowedRanges.map((r: { cidr: string }) => r.cidr)).toEqual(["::ffff:a00:0/104", "fd00::/8"]);
  });
});

describe("who may change it", () => {
  test("a workspace admin who is not the instance owner may read but not change it (403 saying why)", async () => {
    const t = await testApp();
    await sessionOf(t, "owner");
    const member = await sessionOf(t, "member");
    const read = await t.req("GET", PATH, member);
    expect(read.status).toBe(200);
    expect(read.body.data.canChange).toBe(false);
    const res = await t.req("PUT", PATH, { ...member, body: { allowedCidrs: ["10.0.0.0/8"] } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
    expect(res.body.error.message).toContain("only the instance owner may change it");
    expect(res.body.error.message).toContain(`${member.email} is member`);
    expect((await t.req("GET", PATH)).body.data.allowedRanges).toEqual([]);
  });

  test("the owner's session may change it; a token without workspace:admin may not even read it", async () => {
    const t = await testApp();
    const owner = await sessionOf(t, "owner");
    expect((await t.req("GET", PATH, owner)).body.data.canChange).toBe(true);
    expect((await t.req("PUT", PATH, { ...owner, body: { allowedCidrs: ["10.0.0.0/8"] } })).status).toBe(200);
    const reader = await t.token(["workflow:read", "workflow:write"]);
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", { allowedCidrs: [] }],
    ] as const) {
      const res = await t.req(method, PATH, { token: reader, body });
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain('requires the scope "workspace:admin"');
    }
    expect((await t.req("GET", PATH, { token: null })).status).toBe(401);
  });
});

describe("kept and audited", () => {
  test("stored ranges survive a restart and are in force from the start", async () => {
    const t = await testApp();
    expect((await t.req("PUT", PATH, { body: { allowedCidrs: ["127.0.0.0/8"] } })).status).toBe(200);
    const restarted = createApp({ config: t.config, db: t.reopen(), log: createLogger("silent") });
    // `weft serve` waits for this before it runs a step or answers a request.
    await restarted.deps.network.loaded;
    const response = await restarted.deps.guardedFetch(`${listener.url}/after-restart`);
    expect(await response.json()).toEqual({ reached: true });
    const view = await restarted.app.handle(new Request(`http://localhost${PATH}`, { headers: { authorization: `Bearer ${ROOT_TOKEN}` } }));
    expect(((await view.json()) as any).data.allowedRanges.map((r: { cidr: string }) => r.cidr)).toEqual(["127.0.0.0/8"]);
  });

  test("every change is logged with who made it and what was added and removed", async () => {
    const t = await testApp();
    const owner = await sessionOf(t, "owner");
    await t.req("PUT", PATH, { ...owner, body: { allowedCidrs: ["10.0.0.0/8", "192.168.0.0/16"] } });
    await t.req("PUT", PATH, { ...owner, body: { allowedCidrs: ["192.168.0.0/16"] } });
    await t.req("PUT", PATH, { ...owner, body: { allowedCidrs: ["192.168.0.0/16"] } });
    const changes = t.logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg.startsWith("network allow-list changed"));
    expect(changes).toEqual([
      expect.objectContaining({ level: "info", by: owner.email, added: ["10.0.0.0/8", "192.168.0.0/16"], removed: [] }),
      expect.objectContaining({ level: "info", by: owner.email, added: [], removed: ["10.0.0.0/8"], effective: ["192.168.0.0/16"] }),
    ]);
  });
});

describe("in force at once, without a restart", () => {
  test("an http step on a worker thread: refused, reached once 127.0.0.0/8 is allowed, refused again once removed", async () => {
    const t = await engineApp();
    const workflow = await createWorkflow(t, definition(httpGet(`${listener.url}/worker`)));
    const refused = await runAndWait(t, workflow);
    expect(stepOf(refused, "call").errorMessage).toContain("refused to connect to 127.0.0.1");
    expect(stepOf(refused, "call").errorMessage).toContain("an admin can allow a range in Settings → Network (or with WEFT_ALLOW_CIDRS");

    expect((await t.req("PUT", PATH, { body: { allowedCidrs: ["127.0.0.0/8"] } })).status).toBe(200);
    const reached = await runAndWait(t, workflow);
    expect(reached.status).toBe("completed");
    expect(stepOf(reached, "call").outputData.body).toEqual({ reached: true });

    expect((await t.req("PUT", PATH, { body: { allowedCidrs: [] } })).status).toBe(200);
    const again = await runAndWait(t, workflow);
    expect(stepOf(again, "call").errorMessage).toContain("refused to connect to 127.0.0.1");
    // All three ran on the same worker thread, which was told of each change.
    expect(t.deps.engine.stats.workerSteps).toBe(3);
    expect(t.deps.engine.workerPool?.replaced).toBe(0);
    expect(listener.requests.filter((r) => r.path === "/worker")).toHaveLength(1);
  });

  test("a step on the main thread and the API's own piece calls", async () => {
    const t = await engineApp();
    t.deps.pieces.register(testPiece("probe", [{ id: "get", run: async (ctx) => ({ status: (await ctx.fetch(String(ctx.config.url))).status }) }]));
    const workflow = await createWorkflow(
      t,
      definition({ name: "call", type: "PIECE", pieceId: "probe", actionId: "get", config: { url: `${listener.url}/main` } }),
    );
    expect(stepOf(await runAndWait(t, workflow), "call").errorMessage).toContain("refused to connect to 127.0.0.1");
    await t.req("PUT", PATH, { body: { allowedCidrs: ["127.0.0.0/8"] } });
    expect(stepOf(await runAndWait(t, workflow), "call").outputData).toEqual({ status: 200 });
    expect(t.deps.engine.stats.workerSteps).toBe(0);
    await t.req("PUT", PATH, { body: { allowedCidrs: [] } });
    await expect(t.deps.guardedFetch(`${listener.url}/api`)).rejects.toThrow(/refused to connect to 127\.0\.0\.1/);
  });
});
