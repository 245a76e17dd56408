/**
 * Git sync (docs/workflows-as-code.md, "Git sync" and "Environments") against real git servers from Debian's
 * `git` on loopback: `git daemon` (git://, reached through the system git) and `git http-backend` behind a CGI
 * bridge asking for a token (https-style, reached by isomorphic-git). Two workspaces share one branch: push, status,
 * pull, a refused non-fast-forward, a refused overwrite of changes not pushed, and a managed workspace that refuses
 * edits, lists the secret variables it lacks before a pull changes anything, and publishes what it pulls. Runs on SQLite and, with WEFT_TEST_STORAGE=postgres, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterChanges } from "../../src/core/cluster-changes";
import { secretBox } from "../../src/core/crypto";
import { GitSync } from "../../src/core/git/sync";
import { Identity } from "../../src/core/identity";
import { createLogger } from "../../src/http/logger";
import { createGuardedFetch } from "../../src/net/guarded-fetch";
import type { Db } from "../../src/store/db";
import { storageOf } from "../../src/store/storage";
import { until } from "../engine/support";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { connectPostgresDatabase, freshPostgresDatabase } from "../support/postgres-storage";
import { httpClient } from "../mcp/client";
import { testApp, type TestApp } from "../support/app";
import { announceMissingGit, git, gitRoot, hasGit, startGitDaemon, startHttpBackend, type GitServer } from "../support/git-server";
import { remoteHost } from "../../src/core/git/guarded-http";
import { greetDefinition } from "./fixtures";

announceMissingGit();
announceMissingPostgres();

const TOKEN = "git-host-token-1";
/** The git servers listen on loopback, which remotes reach only once allowed, as pieces do (docs/security.md). */
const LOOPBACK = { WEFT_ALLOW_CIDRS: "127.0.0.0/8" };
const root = hasGit() ? gitRoot() : null;
let daemon: GitServer;
let httpBackend: GitServer;

beforeAll(async () => {
  if (!root) return;
  daemon = await startGitDaemon(root.root);
  httpBackend = await startHttpBackend(root.root, TOKEN);
});
afterAll(async () => {
  await daemon?.stop();
  await httpBackend?.stop();
});

async function ok(t: TestApp, method: string, path: string, body?: unknown) {
  const res = await t.req(method, path, body === undefined ? {} : { body });
  expect({ status: res.status, error: res.body?.error }).toEqual({ status: 200, error: undefined });
  return res.body.data;
}

const cases = [
  { name: "git daemon (system git)", server: () => daemon, repo: "daemon.git", token: undefined as string | undefined },
  { name: "git http-backend (isomorphic-git, token)", server: () => httpBackend, repo: "http.git", token: TOKEN },
];

for (const c of cases) {
  describe.skipIf(!root)(c.name, () => {
    let dev: TestApp;
    let other: TestApp;
    let url: string;
    let workflowId: string;

    beforeAll(async () => {
      const repo = root!.repo(c.repo);
      url = c.server().url(c.repo);
      dev = await testApp(LOOPBACK);
      other = await testApp(LOOPBACK);
      // The repository already holds a file of its own: a push keeps it.
      const seed = `${root!.root}/seed-${c.repo}`;
      git(["clone", "-q", repo, seed]);
      await Bun.write(`${seed}/README.md`, "# workflows\n");
      git(["add", "README.md"], seed);
      git(["commit", "-q", "-m", "readme"], seed);
      git(["push", "-q", "origin", "HEAD:main"], seed);
    });

    test("settings: the token is stored encrypted and never answered; a bad remote or branch is refused with what is allowed", async () => {
      const bad = await dev.req("PUT", "/api/git/settings", { body: { remoteUrl: "repo.git" } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain("allowed: https://");
      // A remote that would reach the system git as an option (git's -u is --upload-pack: a command to run).
      const option = await dev.req("PUT", "/api/git/settings", { body: { remoteUrl: "-utouch@host:repo.git" } });
      expect(option.status).toBe(400);
      const badBranch = await dev.req("PUT", "/api/git/settings", { body: { remoteUrl: url, branch: "a..b" } });
      expect(badBranch.status).toBe(400);
      expect(badBranch.body.error.message).toContain('branch "a..b"');
      const saved = await ok(dev, "PUT", "/api/git/settings", { remoteUrl: url, branch: "main", folder: "weft", ...(c.token ? { token: c.token } : {}) });
      expect(saved).toMatchObject({ remoteUrl: url, branch: "main", folder: "weft", hasToken: Boolean(c.token), managed: false, lastCommit: null });
      expect(saved.transport).toBe(c.token ? "http" : "system-git");
      expect(JSON.stringify(saved)).not.toContain(TOKEN);
      const [stored] = await dev.deps.storage.gitSync.list();
      if (c.token) {
        expect(stored!.secret).not.toBeNull();
        expect(stored!.secret).not.toContain(TOKEN);
      }
    });

    test("push: one commit by the caller with the message, files under the folder, other files kept", async () => {
      const created = await dev.req("POST", "/api/workflows", { body: { name: "Greeter", definition: greetDefinition() } });
      expect(created.status).toBe(201);
      workflowId = created.body.data.id;
      const pushed = await ok(dev, "POST", "/api/git/push", { message: "Add the greeter" });
      expect(pushed.pushed).toBe(true);
      expect(pushed.changes).toContainEqual({ path: "workflows/greeter.yaml", change: "added" });
      const bare = `${root!.root}/${c.repo}`;
      expect(git(["--git-dir", bare, "log", "-1", "--format=%s|%an", "main"]).trim()).toMatch(/^Add the greeter\|/);
      const tree = git(["--git-dir", bare, "ls-tree", "-r", "--name-only", "main"]).trim().split("\n");
      expect(tree).toEqual(["README.md", "weft/connections.yaml", "weft/variables/all.yaml", "weft/workflows/greeter.yaml"]);
      expect(git(["--git-dir", bare, "show", "main:weft/workflows/greeter.yaml"])).toContain(`id: ${workflowId}`);
      const again = await ok(dev, "POST", "/api/git/push", { message: "nothing new" });
      expect(again).toMatchObject({ pushed: false, changes: [] });
      const status = await ok(dev, "GET", "/api/git/status");
      expect(status).toMatchObject({ behind: 0, ahead: false, localChanges: [], remoteChanges: [] });
      expect(status.remoteCommit).toBe(pushed.commit);
    });

    test("status and pull in a second workspace: the report is the import's plan", async () => {
      await ok(other, "PUT", "/api/git/settings", { remoteUrl: url, folder: "weft", ...(c.token ? { token: c.token } : {}) });
      const status = await ok(other, "GET", "/api/git/status");
      expect(status.behind).toBe(2);
      expect(status.remoteChanges).toContainEqual({ path: "workflows/greeter.yaml", change: "added" });
      const dry = await ok(other, "POST", "/api/git/pull", { dryRun: true });
      expect(dry.plan).toContainEqual(expect.objectContaining({ action: "create", kind: "workflow", name: "Greeter" }));
      expect((await other.req("GET", "/api/workflows")).body.total).toBe(0);
      // A workflow only this workspace has: a pull that does not prune keeps it, and it stays a change to push.
      const onlyHere = (await other.req("POST", "/api/workflows", { body: { name: "Only here" } })).body.data.id;
      const pulled = await ok(other, "POST", "/api/git/pull", {});
      expect(pulled).toMatchObject({ applied: true, upToDate: false });
      const copy = await other.req("GET", `/api/workflows/${workflowId}`);
      expect(copy.body.data.name).toBe("Greeter");
      expect((await ok(other, "GET", "/api/git/status")).localChanges).toEqual([{ path: "workflows/only-here.yaml", change: "added" }]);
      expect((await other.req("DELETE", `/api/workflows/${onlyHere}`)).status).toBe(200);
      expect(await ok(other, "POST", "/api/git/pull", {})).toMatchObject({ upToDate: true, plan: [] });
    });

    test("a push that is not a fast-forward, and a pull over changes not pushed, are refused with what to do", async () => {
      // dev renames and pushes; other renames its copy too, without pushing.
      const rev = (await dev.req("GET", `/api/workflows/${workflowId}`)).body.data.definitionRev;
      expect((await dev.req("PUT", `/api/workflows/${workflowId}`, { body: { name: "Greeter v2", expectedRev: rev } })).status).toBe(200);
      await ok(dev, "POST", "/api/git/push", { message: "Rename" });
      const otherRev = (await other.req("GET", `/api/workflows/${workflowId}`)).body.data.definitionRev;
      expect((await other.req("PUT", `/api/workflows/${workflowId}`, { body: { description: "edited here", expectedRev: otherRev } })).status).toBe(200);

      const status = await ok(other, "GET", "/api/git/status");
      expect(status).toMatchObject({ behind: 1, ahead: true });
      expect(status.localChanges).toEqual([{ path: "workflows/greeter.yaml", change: "modified" }]);

      const push = await other.req("POST", "/api/git/push", { body: { message: "mine" } });
      expect(push.status).toBe(409);
      expect(push.body.error.code).toBe("NOT_FAST_FORWARD");
      expect(push.body.error.message).toContain("Pull first");

      const pull = await other.req("POST", "/api/git/pull", { body: {} });
      expect(pull.status).toBe(409);
      expect(pull.body.error.code).toBe("LOCAL_CHANGES");
      expect(pull.body.error.message).toContain("overwriteLocal");
      expect(pull.body.error.details.changes).toEqual([{ path: "workflows/greeter.yaml", change: "modified" }]);
      expect((await other.req("GET", `/api/workflows/${workflowId}`)).body.data).toMatchObject({ name: "Greeter", description: "edited here" });

      const forced = await ok(other, "POST", "/api/git/pull", { overwriteLocal: true });
      expect(forced.plan).toContainEqual(expect.objectContaining({ action: "update", name: "Greeter v2" }));
      expect((await other.req("GET", `/api/workflows/${workflowId}`)).body.data).toMatchObject({ name: "Greeter v2", description: "" });
    });

    test("managed: edits through the API are refused naming the branch; a pull publishes what changed", async () => {
      await ok(other, "PUT", "/api/git/settings", { remoteUrl: url, managed: true });
      const edit = await other.req("PUT", `/api/workflows/${workflowId}`, { body: { description: "x" } });
      expect(edit.status).toBe(409);
      expect(edit.body.error.code).toBe("MANAGED_BY_GIT");
      expect(edit.body.error.message).toContain('branch "main"');
      expect((await other.req("POST", "/api/workflows", { body: { name: "new" } })).status).toBe(409);
      expect((await other.req("POST", "/api/git/push", { body: { message: "no" } })).body.error.code).toBe("MANAGED_BY_GIT");
      // Reads still work.
      expect((await other.req("GET", `/api/workflows/${workflowId}`)).status).toBe(200);

      const rev = (await dev.req("GET", `/api/workflows/${workflowId}`)).body.data.definitionRev;
      expect((await dev.req("PUT", `/api/workflows/${workflowId}`, { body: { description: "for production", expectedRev: rev } })).status).toBe(200);
      await ok(dev, "PUT", `/api/workflows/${workflowId}/variables`, { variables: [{ name: "apiKey", value: "dev-secret", secret: true }] });
      await ok(dev, "POST", "/api/git/push", { message: "Describe" });
      // The secret the branch names and this workspace lacks is listed before anything changes, as connections are.
      const toSet = [{ id: workflowId, workflow: "Greeter v2", path: expect.stringMatching(/^workflows\/.+\.yaml$/), name: "apiKey" }];
      const plan = await ok(other, "POST", "/api/git/pull", { dryRun: true });
      expect(plan.secretsToSet).toEqual(toSet);
      expect((await other.req("GET", `/api/workflows/${workflowId}`)).body.data.description).not.toBe("for production");
      const pulled = await ok(other, "POST", "/api/git/pull", {});
      expect(pulled.secretsToSet).toEqual(toSet);
      expect(pulled.published).toEqual([{ id: workflowId, name: "Greeter v2" }]);
      expect(pulled.notPublished).toEqual([]);
      expect((await other.req("GET", `/api/workflows/${workflowId}`)).body.data).toMatchObject({ status: "active", description: "for production" });
      // The branch names the secret variable, never its value: prod sets its own, which is no change to push or to lose.
      await ok(other, "PUT", `/api/workflows/${workflowId}/variables`, { variables: [{ name: "apiKey", value: "prod-secret", secret: true }] });
      expect(await ok(other, "GET", "/api/git/status")).toMatchObject({ localChanges: [], remoteChanges: [] });
      expect((await ok(other, "POST", "/api/git/pull", { dryRun: true })).secretsToSet).toEqual([]);
    });
  });
}

describe.skipIf(!root)("the SSRF guard", () => {
  test("a remote on a loopback address is refused on both transports until its range is allowed, and nothing is pushed", async () => {
    const t = await testApp();
    for (const [server, repo] of [
      [() => httpBackend, "guarded-http.git"],
      [() => daemon, "guarded-daemon.git"],
    ] as const) {
      const dir = root!.repo(repo);
      const url = server().url(repo);
      await ok(t, "PUT", "/api/git/settings", { remoteUrl: url, branch: "main", ...(repo.includes("http") ? { token: TOKEN } : {}) });
      await t.req("POST", "/api/workflows", { body: { name: `Guarded ${repo}`, definition: greetDefinition() } });
      const pushed = await t.req("POST", "/api/git/push", { body: { message: "Should not leave" } });
      expect({ status: pushed.status, code: pushed.body.error?.code }).toEqual({ status: 502, code: "GIT_REMOTE_FAILED" });
      expect(pushed.body.error.message).toContain(`cannot reach ${url}`);
      expect(pushed.body.error.message).toContain("a loopback address");
      expect(pushed.body.error.message).toContain("Settings → Network");
      // The repository on the server has no branch: nothing reached it.
      expect(git(["branch", "--list"], dir).trim()).toBe("");
      const pulled = await t.req("POST", "/api/git/pull", { body: {} });
      expect(pulled.body.error?.code).toBe("GIT_REMOTE_FAILED");
    }
  });

  test("the host a system-git remote connects to is the one checked; a local path names none", () => {
    expect(remoteHost("ssh://git@169.254.169.254:2222/team/flows.git")).toBe("169.254.169.254");
    expect(remoteHost("ssh://[::1]/flows.git")).toBe("::1");
    expect(remoteHost("git@10.0.0.5:team/flows.git")).toBe("10.0.0.5");
    expect(remoteHost("git://metadata.google.internal/x.git")).toBe("metadata.google.internal");
    expect(remoteHost("/srv/git/flows.git")).toBeUndefined();
    expect(remoteHost("file:///srv/git/flows.git")).toBeUndefined();
  });
});

describe.skipIf(!root)("credentials, the push webhook, the schedule, SSH keys, MCP and the audit log", () => {
  let dev: TestApp;
  let prod: TestApp;
  let url: string;
  let workflowId: string;
  let workspaceId: string;

  beforeAll(async () => {
    root!.repo("promote.git");
    url = httpBackend.url("promote.git");
    dev = await testApp(LOOPBACK);
    prod = await testApp(LOOPBACK);
    await ok(dev, "PUT", "/api/git/settings", { remoteUrl: url, token: TOKEN });
    workflowId = (await dev.req("POST", "/api/workflows", { body: { name: "Hook me", definition: greetDefinition() } })).body.data.id;
    await ok(dev, "POST", "/api/git/push", { message: "First" });
  });

  test("a token the host refuses answers 502 naming the remote and what to check", async () => {
    await ok(prod, "PUT", "/api/git/settings", { remoteUrl: url, token: "wrong" });
    const res = await prod.req("GET", "/api/git/status");
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("GIT_REMOTE_FAILED");
    expect(res.body.error.message).toContain("check the token");
  });

  test("the push webhook pulls when signed (GitHub's and Gitea's headers), ignores other branches, refuses a bad signature", async () => {
    const settings = await ok(prod, "PUT", "/api/git/settings", { remoteUrl: url, token: TOKEN, managed: true, webhook: true });
    expect(settings.webhookPath).toMatch(/^\/api\/git\/webhook\//);
    workspaceId = settings.webhookPath.split("/").at(-1);
    const body = JSON.stringify({ ref: "refs/heads/main", after: "x" });
    const sign = (text: string, secret = settings.webhookSecret) => createHmac("sha256", secret).update(text).digest("hex");
    const send = (text: string, headers: Record<string, string>) =>
      prod.app.handle(
        new Request(`http://localhost${settings.webhookPath}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text }),
      );

    const forged = await send(body, { "x-hub-signature-256": `sha256=${sign(body, "not-the-secret")}` });
    expect(forged.status).toBe(401);
    expect((await prod.req("GET", "/api/workflows")).body.total).toBe(0);

    const other = JSON.stringify({ ref: "refs/heads/feature" });
    const ignored = await send(other, { "x-gitea-signature": sign(other) });
    expect(ignored.status).toBe(200);
    expect((await ignored.json()).data).toMatchObject({ pulled: false, reason: expect.stringContaining("refs/heads/feature") });

    const ping = JSON.stringify({ zen: "hello" });
    const pinged = await send(ping, { "x-github-event": "ping", "x-hub-signature-256": `sha256=${sign(ping)}` });
    expect((await pinged.json()).data).toMatchObject({ pulled: false, reason: "a ping event, not a push" });

    const pulled = await send(body, { "x-github-event": "push", "x-hub-signature-256": `sha256=${sign(body)}` });
    expect(pulled.status).toBe(200);
    expect((await pulled.json()).data.pulled).toBe(true);
    expect((await prod.req("GET", `/api/workflows/${workflowId}`)).body.data.status).toBe("active");
    const audit = await prod.req("GET", "/api/audit?action=git.pulled");
    expect(audit.body.data[0]).toMatchObject({ action: "git.pulled", actor: { type: "anonymous", name: "git webhook" } });
  });

  test("a scheduled pull takes what dev pushed; a schedule that is no cron pattern is refused", async () => {
    const bad = await prod.req("PUT", "/api/git/settings", { body: { remoteUrl: url, schedule: "every minute" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("cron pattern");
    const rev = (await dev.req("GET", `/api/workflows/${workflowId}`)).body.data.definitionRev;
    await dev.req("PUT", `/api/workflows/${workflowId}`, { body: { description: "scheduled", expectedRev: rev } });
    await ok(dev, "POST", "/api/git/push", { message: "For the schedule" });
    await ok(prod, "PUT", "/api/git/settings", { remoteUrl: url, schedule: "* * * * * *" });
    // The pull is recorded once it is done: wait for its audit event (bounded), then look at what it changed.
    const lastPuller = async () => (await prod.req("GET", "/api/audit?action=git.pulled")).body.data[0]?.actor.name;
    for (let i = 0; i < 100 && (await lastPuller()) !== "git schedule"; i++) await Bun.sleep(100);
    await ok(prod, "PUT", "/api/git/settings", { remoteUrl: url, schedule: null });
    expect(await lastPuller()).toBe("git schedule");
    expect((await prod.req("GET", `/api/workflows/${workflowId}`)).body.data.description).toBe("scheduled");
  });

  test("MCP tools that edit workflows are refused in a managed workspace", async () => {
    const mcp = await httpClient("http://localhost/mcp", await prod.token("all"), (r) => prod.app.handle(r));
    try {
      const refused = await mcp.call("update_workflow", { id: workflowId, description: "via mcp" });
      expect(refused.isError).toBe(true);
      expect(refused.body.error.code).toBe("MANAGED_BY_GIT");
      expect((await mcp.call("get_workflow", { id: workflowId })).isError).toBe(false);
    } finally {
      await mcp.close();
    }
  });

  test("push and settings changes are in the audit log, without the token", async () => {
    const events = (await dev.req("GET", "/api/audit?limit=100")).body.data.filter((e: any) => e.action.startsWith("git."));
    expect(events.map((e: any) => e.action)).toEqual(["git.pushed", "git.pushed", "git.settings_changed"]);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  test("a stored token is kept for the same remote only: it is never sent to another host", async () => {
    const t = await testApp();
    expect(await ok(t, "PUT", "/api/git/settings", { remoteUrl: "https://git.example.test/a.git", token: "secret-a" })).toMatchObject({ hasToken: true });
    expect(await ok(t, "PUT", "/api/git/settings", { remoteUrl: "https://git.example.test/a.git", branch: "prod" })).toMatchObject({ hasToken: true });
    expect(await ok(t, "PUT", "/api/git/settings", { remoteUrl: "https://elsewhere.example.test/a.git" })).toMatchObject({ hasToken: false });
    const [row] = await t.deps.storage.gitSync.list();
    expect(row!.secret).toBeNull();
  });

  test.skipIf(!existsSync("/usr/bin/ssh-keygen"))("an SSH remote gets a key Weft makes: the public half shown, the private one stored encrypted", async () => {
    const t = await testApp();
    await ok(t, "PUT", "/api/git/settings", { remoteUrl: "git@git.example.test:team/flows.git" });
    const { publicKey } = await ok(t, "POST", "/api/git/ssh-key");
    expect(publicKey).toMatch(/^ssh-ed25519 \S+ weft-/);
    expect(await ok(t, "GET", "/api/git/settings")).toMatchObject({ hasSshKey: true, sshPublicKey: publicKey, transport: "system-git" });
    const [row] = await t.deps.storage.gitSync.list();
    expect(row!.secret).not.toContain("PRIVATE KEY");
    expect(t.deps.secrets.decrypt(row!.secret!)).toContain("BEGIN OPENSSH PRIVATE KEY");
  });
});

describe.skipIf(!postgresBinaries())("a cluster's pull schedules, two instances in one process on one PostgreSQL database", () => {
  test("a schedule saved through A is kept by B, which pulls on it once A is gone; removed through A, B stops", async () => {
    const { url, db } = await freshPostgresDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "weft-git-schedule-"));
    const { workspaceId, orgId } = await new Identity(storageOf(db)).ensureOrg();
    const instance = (instanceDb: Db, name: string) => {
      const changes = new ClusterChanges({ db: instanceDb, log: createLogger("silent"), recheckMs: 60_000 });
      const pulls: string[] = [];
      const sync = new GitSync({
        storage: storageOf(instanceDb),
        secrets: secretBox({ dataDir }),
        workflows: undefined as never,
        files: undefined as never,
        dataDir,
        instanceId: name,
        fetch: () => createGuardedFetch(),
        changes,
        // The remote is unreachable: each scheduled pull ends in an error, which is what is counted here.
        onPull: (_workspace, how) => void pulls.push(how),
      });
      return { changes, sync, pulls };
    };
    const a = instance(db, "a");
    const b = instance(connectPostgresDatabase(url), "b");
    await a.changes.start();
    await b.changes.start();
    await a.sync.start();
    await b.sync.start();
    try {
      const actor = { workspaceId, orgId, userId: null, credentialId: "test" };
      // Every second; B's re-read timer is a minute away, so only the announcement can tell it.
      await a.sync.save(actor, { remoteUrl: "https://git.invalid/team/flows.git", schedule: "* * * * * *" });
      a.sync.stop();
      await until(
        () => b.pulls,
        (pulls) => pulls.length > 0,
        4_000,
      );
      expect(b.pulls[0]).toBe("schedule");
      expect(a.pulls).toEqual([]);

      await a.sync.remove(workspaceId);
      await Bun.sleep(300);
      const after = b.pulls.length;
      await Bun.sleep(2_200);
      expect(b.pulls.length).toBe(after);
    } finally {
      a.sync.stop();
      b.sync.stop();
      await a.changes.stop();
      await b.changes.stop();
    }
  }, 20_000);
});
