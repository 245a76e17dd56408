/**
 * Instances of a cluster that start together, with real `weft serve` processes on one PostgreSQL database:
 * - three started at the same instant on an empty database (a deploy, a reboot), 20 times in a row: every one
 *   becomes healthy, the database holds one org, and the bootstrap token works on each;
 * - owner setups (the UI's first screen) sent at the same moment to two instances: one owner, every other
 *   setup answers 409 saying setup is done;
 * - three started with the same WEFT_OIDC_PROVIDERS, their login pages asked at the same moment: each provider is
 *   written once, and every login page lists it once.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { call, clusterEnv, ok, startInstance } from "../support/cluster";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { emptyPostgresDatabase, networkPostgresDatabase, testStorage } from "../support/postgres-storage";
import type { ServerHandle } from "../support/server";

announceMissingPostgres();

const servers: ServerHandle[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
});

/** What makes a start quick: no restart for the runtime's tuning, one worker thread, no reader threads (and clusterEnv's 1 s heartbeat). */
const QUICK_START = { WEFT_HEAP_TUNING: "off", WEFT_WORKERS: "1", WEFT_READER_THREADS: "0" };

/** The rows a query answers: the test reads the database as an operator would, with psql. */
async function rows(url: string, text: string): Promise<Array<Record<string, unknown>>> {
  const sql = new SQL(url, { adapter: "postgres", max: 1 });
  try {
    return [...(await sql.unsafe(text))];
  } finally {
    await sql.close();
  }
}

// Real processes on PostgreSQL whichever storage the in-process apps use: the PostgreSQL pass (npm run
// test:postgres) would repeat these minutes unchanged, so they run in the first pass only.
const repeated = testStorage() === "postgres";
if (repeated && postgresBinaries()) console.log("start-up races: run in the SQLite pass (npm test); this pass would repeat them unchanged");

describe.skipIf(!postgresBinaries() || repeated)("instances starting together on one PostgreSQL database", () => {
  test("three at the same instant on an empty database, 20 times in a row: all healthy, one org, the bootstrap token valid on each", async () => {
    for (let round = 1; round <= 20; round++) {
      // No schema at all, so the three also race to migrate it; reached directly, which keeps 20 rounds near a minute.
      const url = await emptyPostgresDatabase();
      const env = clusterEnv(url, QUICK_START);
      const starts = await Promise.allSettled([0, 1, 2].map(() => startInstance(servers, env)));
      const crashed = starts.flatMap((start) => (start.status === "rejected" ? [String(start.reason).slice(0, 2_000)] : []));
      expect({ round, crashed }).toEqual({ round, crashed: [] });
      const trio = starts.map((start) => (start as PromiseFulfilledResult<ServerHandle>).value);

      const orgs = await rows(url, "SELECT id, name FROM orgs");
      expect({ round, orgs: orgs.length }).toEqual({ round, orgs: 1 });
      expect(await rows(url, "SELECT name FROM workspaces")).toEqual([{ name: "Default workspace" }]);
      for (const server of trio) {
        const me = (await ok(server, "GET", "/api/auth/me")).data;
        expect(me.workspace.orgId).toBe(orgs[0]!.id);
        expect(me.scopes.length).toBeGreaterThan(10);
      }
      // A clean stop is not what is tested; the next round has a database of its own.
      await Promise.all(trio.map((server) => server.stop("SIGKILL")));
      servers.length = 0;
    }
  }, 300_000);

  test("owner setups sent at the same moment to two instances: one owner, every other answer a 409", async () => {
    const { url } = await networkPostgresDatabase();
    const env = clusterEnv(url, QUICK_START);
    const [a, b] = await Promise.all([startInstance(servers, env), startInstance(servers, env)]);
    expect((await ok(a, "GET", "/api/auth/status")).data.needsSetup).toBe(true);

    const setup = (server: ServerHandle, email: string) =>
      server.fetch("/api/auth/setup", {
        method: "POST",
        token: null,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "correct horse battery staple", name: email.split("@")[0] }),
      });
    // Several from each side: password hashing takes each setup a different time, so that some of them reach the
    // database in the same millisecond on both instances.
    const emails = Array.from({ length: 12 }, (_, i) => `owner${i}@example.com`);
    const answers = await Promise.all(emails.map((email, i) => setup(i % 2 ? b! : a!, email)));
    const bodies = await Promise.all(answers.map((answer) => answer.json() as Promise<any>));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array(11).fill(409)]);
    for (const refused of bodies.filter((body) => body.error)) {
      expect(refused.error.code).toBe("CONFLICT");
      expect(refused.error.message).toContain("setup is already done");
    }
    const owner = bodies.find((body) => body.data)!.data.user;

    expect(await rows(url, "SELECT email, role FROM users")).toEqual([{ email: owner.email, role: "owner" }]);
    for (const server of [a!, b!]) {
      expect((await ok(server, "GET", "/api/auth/status")).data.needsSetup).toBe(false);
      const login = (email: string) => call(server, "POST", "/api/auth/login", { email, password: "correct horse battery staple" });
      expect((await login(owner.email)).status).toBe(200);
      expect((await login(emails.find((email) => email !== owner.email)!)).status).toBe(401);
    }
  }, 60_000);

  test("the same WEFT_OIDC_PROVIDERS on three instances, their login pages asked at once: one provider, listed once on each", async () => {
    const providers = [{ name: "Company IdP", issuer: "https://idp.example.com/realms/weft", clientId: "weft", clientSecret: "s3cret" }];
    // Each instance writes the providers before its first use of them: the first login page asked.
    for (let round = 1; round <= 3; round++) {
      const { url } = await networkPostgresDatabase();
      const env = clusterEnv(url, { ...QUICK_START, WEFT_OIDC_PROVIDERS: JSON.stringify(providers) });
      const trio = await Promise.all([0, 1, 2].map(() => startInstance(servers, env)));
      const answers = await Promise.all(trio.map((server) => call(server, "GET", "/api/auth/sso")));
      expect({ round, statuses: answers.map((answer) => answer.status) }).toEqual({ round, statuses: [200, 200, 200] });
      const stored = await rows(url, "SELECT id, name FROM sso_providers");
      expect({ round, stored: stored.map((row) => row.name) }).toEqual({ round, stored: ["Company IdP"] });
      for (const answer of answers)
        expect(answer.body.data).toEqual([{ id: stored[0]!.id, name: "Company IdP", startPath: `/api/auth/sso/${stored[0]!.id}/start` }]);
      await Promise.all(trio.map((server) => server.stop("SIGKILL")));
      servers.length = 0;
    }
  }, 120_000);
});
