/**
 * Git sync over SSH, end to end (docs/workflows-as-code.md, "Git sync"): Debian's `sshd` on loopback
 * (test/support/sshd.ts, its own host key, run as the current user) serves a bare repository; each workspace makes
 * its key with POST /api/git/ssh-key, the public key it shows is put in the server's authorized keys, and Weft pushes
 * and pulls over ssh://… with it. The host's key is accepted the first time into `<data dir>/git/known_hosts` and
 * checked afterwards: a server answering with another key is refused. Runs on SQLite and, with
 * WEFT_TEST_STORAGE=postgres, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { testApp, type TestApp } from "../support/app";
import { announceMissingGit, git, gitRoot, hasGit } from "../support/git-server";
import { announceMissingSshd, hasSshd, type SshdHandle, startSshd } from "../support/sshd";
import { greetDefinition } from "./fixtures";

announceMissingGit();
announceMissingSshd();
const ready = hasGit() && hasSshd();

async function ok(t: TestApp, method: string, path: string, body?: unknown) {
  const res = await t.req(method, path, body === undefined ? {} : { body });
  expect({ status: res.status, error: res.body?.error }).toEqual({ status: 200, error: undefined });
  return res.body.data;
}

describe.skipIf(!ready)("git sync over SSH (sshd on loopback)", () => {
  let sshd: SshdHandle;
  let dev: TestApp;
  let other: TestApp;
  let bare: string;
  let url: string;
  let workflowId: string;

  beforeAll(async () => {
    const root = gitRoot();
    bare = root.repo("ssh.git");
    sshd = await startSshd();
    url = `ssh://${sshd.user}@127.0.0.1:${sshd.port}${bare}`;
    // sshd listens on loopback, which remotes reach only once allowed, as pieces do (docs/security.md).
    dev = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
    other = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
  });
  afterAll(async () => {
    await sshd?.stop();
    for (const t of [dev, other]) {
      await t?.deps.engine.stop(500);
      t?.db.close();
    }
  });

  test("the key Weft makes is shown (public half only) and, once authorized, pushes over ssh://", async () => {
    const saved = await ok(dev, "PUT", "/api/git/settings", { remoteUrl: url, branch: "main" });
    expect(saved).toMatchObject({ transport: "system-git", hasSshKey: false, sshPublicKey: null });
    const { publicKey } = await ok(dev, "POST", "/api/git/ssh-key");
    expect(publicKey).toMatch(/^ssh-ed25519 \S+ weft-/);
    const settings = await ok(dev, "GET", "/api/git/settings");
    expect(settings).toMatchObject({ hasSshKey: true, sshPublicKey: publicKey });
    expect(JSON.stringify(settings)).not.toContain("PRIVATE KEY");
    sshd.authorize(publicKey);

    workflowId = (await dev.req("POST", "/api/workflows", { body: { name: "Greeter", definition: greetDefinition() } })).body.data.id;
    const pushed = await ok(dev, "POST", "/api/git/push", { message: "Add the greeter over SSH" });
    expect(pushed.pushed).toBe(true);
    expect(git(["--git-dir", bare, "log", "-1", "--format=%s", "main"]).trim()).toBe("Add the greeter over SSH");
    expect(git(["--git-dir", bare, "show", "main:workflows/greeter.yaml"])).toContain(`id: ${workflowId}`);
    // The server logged the login with Weft's key.
    expect(sshd.log()).toContain("Accepted publickey");
  }, 60_000);

  test("the host's key was accepted the first time into <data dir>/git/known_hosts", () => {
    const knownHosts = join(dev.dataDir, "git", "known_hosts");
    expect(existsSync(knownHosts)).toBe(true);
    // Looked up as a user would (the entry may be hashed, as Debian's ssh_config asks).
    const found = spawnSync("ssh-keygen", ["-F", `[127.0.0.1]:${sshd.port}`, "-f", knownHosts], { encoding: "utf8" });
    expect(found.status).toBe(0);
    const [type, key] = sshd.hostKey.split(" ");
    expect(found.stdout).toContain(`${type} ${key}`);
  });

  test("a key the server does not know is refused (502 naming the remote); once authorized, the pull imports", async () => {
    await ok(other, "PUT", "/api/git/settings", { remoteUrl: url });
    const { publicKey } = await ok(other, "POST", "/api/git/ssh-key");
    const refused = await other.req("GET", "/api/git/status");
    expect(refused.status).toBe(502);
    expect(refused.body.error.code).toBe("GIT_REMOTE_FAILED");
    expect(refused.body.error.message).toContain("Permission denied");

    sshd.authorize(publicKey);
    const status = await ok(other, "GET", "/api/git/status");
    expect(status.remoteChanges).toContainEqual({ path: "workflows/greeter.yaml", change: "added" });
    const pulled = await ok(other, "POST", "/api/git/pull", {});
    expect(pulled).toMatchObject({ applied: true, upToDate: false });
    expect((await other.req("GET", `/api/workflows/${workflowId}`)).body.data.name).toBe("Greeter");

    // And back: other renames and pushes over its own key; dev pulls the rename.
    const rev = (await other.req("GET", `/api/workflows/${workflowId}`)).body.data.definitionRev;
    expect((await other.req("PUT", `/api/workflows/${workflowId}`, { body: { name: "Greeter v2", expectedRev: rev } })).status).toBe(200);
    expect((await ok(other, "POST", "/api/git/push", { message: "Rename" })).pushed).toBe(true);
    await ok(dev, "POST", "/api/git/pull", {});
    expect((await dev.req("GET", `/api/workflows/${workflowId}`)).body.data.name).toBe("Greeter v2");
  }, 90_000);

  test("a server answering at the same address with another host key is refused, and nothing changes", async () => {
    const port = sshd.port;
    const devKey = (await ok(dev, "GET", "/api/git/settings")).sshPublicKey;
    await sshd.stop();
    sshd = await startSshd({ port });
    sshd.authorize(devKey);
    const res = await dev.req("GET", "/api/git/status");
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("GIT_REMOTE_FAILED");
    expect(res.body.error.message).toContain("another host key than the one accepted the first time");
    expect(res.body.error.message).toContain(join(dev.dataDir, "git", "known_hosts"));
    expect(sshd.log()).not.toContain("Accepted publickey");
  });
});
