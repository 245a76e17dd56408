/**
 * A workspace's clone of its git remote (docs/workflows-as-code.md, "Git sync"): a bare repository under the data
 * directory, read and written with isomorphic-git (objects, trees, commits, history), so Weft needs no system
 * `git` for HTTP(S) remotes. isomorphic-git speaks only git's HTTP protocol: a local path, `git://` and SSH
 * remotes are fetched and pushed by the system `git`, checked when first used.
 *
 * No working tree: a commit is built from the last synced commit's tree with the files Weft writes replaced.
 * Every remote reaches only what the SSRF guard allows (./guarded-http.ts).
 */
import { randomUUID } from "node:crypto";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { dirname } from "node:path";
import git, { type HttpClient } from "isomorphic-git";
import { AppError } from "../../http/errors";
import { type Clock, systemClock } from "../../lib/clock";
import type { GuardedFetch } from "../../pieces-sdk/types";
import { checkRemoteHost, guardedGitHttp } from "./guarded-http";

export interface Remote {
  url: string;
  branch: string;
  /** HTTPS: the user name sent with the token (most hosts take any; GitHub wants `x-access-token`). */
  username?: string | null;
  /** HTTPS: the token, sent as the password. */
  token?: string | null;
  /** SSH: the private key (OpenSSH format), used through the system `git` and `ssh`. */
  privateKey?: string | null;
}

export interface Author {
  name: string;
  email: string;
}

/** Which transport a remote needs: isomorphic-git for HTTP(S), the system `git` for everything else. */
export const transportOf = (url: string): "http" | "system-git" => (/^https?:\/\//i.test(url) ? "http" : "system-git");

/**
 * An SSH remote: `ssh://…` or scp-like `user@host:path` — never starting with "-": the URL is handed to the system
 * `git` as an argument, which would read it as one of its options.
 */
export const isSsh = (url: string) => /^ssh:\/\//i.test(url) || /^\w[\w.-]*@[\w.-]+:/.test(url);

export class RemoteRefusedError extends Error {}

export class GitClone {
  private readonly http: HttpClient;

  constructor(
    /** The bare repository's directory (created on first use). */
    readonly gitdir: string,
    /** Where an SSH key is written for the system `git` (0600, removed after the call). */
    private readonly scratchDir: string,
    /** The guarded fetch of the instance (its allow-list), asked per call: HTTP(S) remotes go through it, other remotes' hosts are checked by it. */
    private readonly network: () => GuardedFetch,
    /** A commit's time (docs/architecture.md, "Time"). */
    private readonly clock: Clock = systemClock,
  ) {
    this.http = guardedGitHttp(network);
  }

  private async ready(branch: string): Promise<void> {
    if (fs.existsSync(`${this.gitdir}/HEAD`)) return;
    fs.mkdirSync(this.gitdir, { recursive: true });
    await git.init({ fs, dir: this.gitdir, gitdir: this.gitdir, bare: true, defaultBranch: branch });
  }

  private trackingRef = (branch: string) => `refs/remotes/origin/${branch}`;

  /** Fetches the branch; answers its head commit on the remote, or null when the remote has no such branch yet. */
  async fetch(remote: Remote): Promise<string | null> {
    await this.ready(remote.branch);
    if (transportOf(remote.url) === "http") {
      await git.setConfig({ fs, gitdir: this.gitdir, path: "remote.origin.url", value: remote.url });
      await git.setConfig({ fs, gitdir: this.gitdir, path: "remote.origin.fetch", value: "+refs/heads/*:refs/remotes/origin/*" });
      try {
        const result = await git.fetch({
          fs,
          http: this.http,
          gitdir: this.gitdir,
          url: remote.url,
          ref: remote.branch,
          remote: "origin",
          singleBranch: true,
          tags: false,
          onAuth: () => this.auth(remote),
        });
        // An empty remote answers no head; a remote without this branch fetches its default one (fetchHead names it).
        if (!result.fetchHead) return null;
        return await this.resolve(this.trackingRef(remote.branch));
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === "NotFoundError" || code === "EmptyServerResponseError") return null;
        throw this.transportError(remote, error);
      }
    }
    const out = await this.system(remote, ["ls-remote", "--heads", remote.url, `refs/heads/${remote.branch}`]);
    if (!out.trim()) return null;
    await this.system(remote, ["fetch", "--no-tags", remote.url, `+refs/heads/${remote.branch}:${this.trackingRef(remote.branch)}`]);
    return this.resolve(this.trackingRef(remote.branch));
  }

  /** Pushes `commit` to the branch; RemoteRefusedError when the remote refuses it (not a fast-forward). */
  async push(remote: Remote, commit: string): Promise<void> {
    const local = `refs/heads/${remote.branch}`;
    await git.writeRef({ fs, gitdir: this.gitdir, ref: local, value: commit, force: true });
    if (transportOf(remote.url) === "http") {
      let result: Awaited<ReturnType<typeof git.push>>;
      try {
        result = await git.push({ fs, http: this.http, gitdir: this.gitdir, url: remote.url, ref: local, remoteRef: local, onAuth: () => this.auth(remote) });
      } catch (error) {
        if ((error as { code?: string }).code === "PushRejectedError") throw new RemoteRefusedError((error as Error).message);
        throw this.transportError(remote, error);
      }
      if (!result.ok) throw new RemoteRefusedError(result.error ?? Object.values(result.refs)[0]?.error ?? "the remote refused the push");
    } else {
      try {
        await this.system(remote, ["push", "--porcelain", remote.url, `${commit}:${local}`]);
      } catch (error) {
        if (/rejected|non-fast-forward|fetch first/i.test((error as Error).message)) throw new RemoteRefusedError((error as Error).message);
        throw error;
      }
    }
    await git.writeRef({ fs, gitdir: this.gitdir, ref: this.trackingRef(remote.branch), value: commit, force: true });
  }

  private async resolve(ref: string): Promise<string | null> {
    try {
      return await git.resolveRef({ fs, gitdir: this.gitdir, ref });
    } catch {
      return null;
    }
  }

  private auth(remote: Remote) {
    return remote.token ? { username: remote.username || "x-access-token", password: remote.token } : { cancel: true };
  }

  private transportError(remote: Remote, error: unknown): AppError {
    const code = (error as { code?: string }).code;
    const message = (error as Error).message ?? String(error);
    if (code === "HttpError" && /401|403/.test(message))
      return new AppError("GIT_REMOTE_FAILED", `${remote.url} refused the credentials (${message}); check the token and its rights on the repository`);
    return new AppError("GIT_REMOTE_FAILED", `cannot reach ${remote.url}: ${message}`);
  }

  /** Runs the system `git` on this clone; its error names what to install when `git` is missing. */
  private async system(remote: Remote, args: string[]): Promise<string> {
    try {
      await checkRemoteHost(this.network, remote.url);
    } catch (error) {
      throw new AppError("GIT_REMOTE_FAILED", `cannot reach ${remote.url}: ${(error as Error).message}`);
    }
    let keyFile: string | undefined;
    const env: Record<string, string> = { ...process.env, GIT_TERMINAL_PROMPT: "0" } as Record<string, string>;
    if (remote.privateKey) {
      fs.mkdirSync(this.scratchDir, { recursive: true, mode: 0o700 });
      keyFile = `${this.scratchDir}/key-${process.pid}-${randomUUID()}`;
      fs.writeFileSync(keyFile, remote.privateKey.endsWith("\n") ? remote.privateKey : `${remote.privateKey}\n`, { mode: 0o600 });
      // The host's key is accepted the first time into the data directory's known_hosts and checked afterwards: a
      // host answering with another key is refused (docs/workflows-as-code.md, "Git sync"). BatchMode: never a prompt.
      const knownHosts = `${dirname(this.gitdir)}/known_hosts`;
      env.GIT_SSH_COMMAND = `ssh -i '${keyFile}' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile='${knownHosts}'`;
    }
    try {
      return await run("git", ["--git-dir", this.gitdir, ...args], env, remote.url);
    } catch (error) {
      if (keyFile && /host key verification failed|remote host identification has changed/i.test((error as Error).message))
        throw new AppError(
          "GIT_REMOTE_FAILED",
          `the SSH host of ${remote.url} answered with another host key than the one accepted the first time (kept in ${dirname(this.gitdir)}/known_hosts); if the host's key was changed on purpose, remove its line from that file (ssh-keygen -R '[host]:port' -f …) and try again`,
        );
      throw error;
    } finally {
      if (keyFile) fs.rmSync(keyFile, { force: true });
    }
  }

  // ------------------------------------------------------------------ objects

  /** The text of every file of `commit` under `folder` ("" for the root), by path relative to it. */
  async files(commit: string, folder: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const all = await this.blobs(commit);
    const prefix = folder ? `${folder}/` : "";
    const decoder = new TextDecoder();
    for (const [path, entry] of all) {
      if (!path.startsWith(prefix)) continue;
      const { blob } = await git.readBlob({ fs, gitdir: this.gitdir, oid: entry.oid });
      out[path.slice(prefix.length)] = decoder.decode(blob);
    }
    return out;
  }

  /** Every blob of a commit's tree: path → its oid and mode. */
  private async blobs(commit: string | null): Promise<Map<string, { oid: string; mode: string }>> {
    const out = new Map<string, { oid: string; mode: string }>();
    if (!commit) return out;
    const visit = async (oid: string, prefix: string) => {
      const { tree } = await git.readTree({ fs, gitdir: this.gitdir, oid });
      for (const entry of tree) {
        if (entry.type === "tree") await visit(entry.oid, `${prefix}${entry.path}/`);
        else out.set(`${prefix}${entry.path}`, { oid: entry.oid, mode: entry.mode });
      }
    };
    await visit((await git.readCommit({ fs, gitdir: this.gitdir, oid: commit })).commit.tree, "");
    return out;
  }

  /**
   * A commit on `parent` whose tree is the parent's with every path `replaces` says Weft owns (under `folder`)
   * removed and `files` written there. Answers null when the tree would not change.
   */
  async commit(parent: string | null, folder: string, files: Record<string, string>, replaces: (path: string) => boolean, message: string, author: Author) {
    const prefix = folder ? `${folder}/` : "";
    const entries = await this.blobs(parent);
    for (const path of [...entries.keys()]) if (path.startsWith(prefix) && replaces(path.slice(prefix.length))) entries.delete(path);
    const encoder = new TextEncoder();
    for (const [path, text] of Object.entries(files)) {
      const oid = await git.writeBlob({ fs, gitdir: this.gitdir, blob: encoder.encode(text) });
      entries.set(`${prefix}${path}`, { oid, mode: "100644" });
    }
    const tree = await this.writeTrees(entries);
    if (parent && (await git.readCommit({ fs, gitdir: this.gitdir, oid: parent })).commit.tree === tree) return null;
    const when = { timestamp: Math.floor(this.clock.now() / 1000), timezoneOffset: 0 };
    return git.writeCommit({
      fs,
      gitdir: this.gitdir,
      commit: {
        tree,
        parent: parent ? [parent] : [],
        message: message.endsWith("\n") ? message : `${message}\n`,
        author: { ...author, ...when },
        committer: { ...author, ...when },
      },
    });
  }

  private async writeTrees(entries: Map<string, { oid: string; mode: string }>): Promise<string> {
    interface Dir {
      files: Map<string, { oid: string; mode: string }>;
      dirs: Map<string, Dir>;
    }
    const root: Dir = { files: new Map(), dirs: new Map() };
    for (const [path, entry] of entries) {
      const parts = path.split("/");
      let dir = root;
      for (const part of parts.slice(0, -1)) {
        if (!dir.dirs.has(part)) dir.dirs.set(part, { files: new Map(), dirs: new Map() });
        dir = dir.dirs.get(part)!;
      }
      dir.files.set(parts.at(-1)!, entry);
    }
    const write = async (dir: Dir): Promise<string> => {
      const tree: Array<{ mode: string; path: string; oid: string; type: "blob" | "tree" }> = [];
      for (const [name, entry] of dir.files) tree.push({ mode: entry.mode, path: name, oid: entry.oid, type: "blob" });
      for (const [name, sub] of dir.dirs) tree.push({ mode: "040000", path: name, oid: await write(sub), type: "tree" });
      return git.writeTree({ fs, gitdir: this.gitdir, tree });
    };
    return write(root);
  }

  /** How many commits `head` has that `base` has not (up to `limit`); null when `base` is not in `head`'s history. */
  async commitsSince(head: string, base: string | null, limit = 1000): Promise<number | null> {
    const log = await git.log({ fs, gitdir: this.gitdir, ref: head, depth: limit });
    if (!base) return log.length;
    const at = log.findIndex((entry) => entry.oid === base);
    return at < 0 ? null : at;
  }
}

/** An Ed25519 key pair made by the system `ssh-keygen` in `dir` (the files are removed at once). */
export async function generateKeyPair(dir: string, comment: string): Promise<{ privateKey: string; publicKey: string }> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = `${dir}/new-${process.pid}-${randomUUID()}`;
  try {
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file], { ...process.env } as Record<string, string>, "an SSH remote");
    return { privateKey: fs.readFileSync(file, "utf8"), publicKey: fs.readFileSync(`${file}.pub`, "utf8").trim() };
  } finally {
    fs.rmSync(file, { force: true });
    fs.rmSync(`${file}.pub`, { force: true });
  }
}

/** Runs a program; rejects with its stderr, or with what to install when the program is missing. */
function run(command: string, args: string[], env: Record<string, string>, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("error", (error) => {
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      reject(
        missing
          ? new AppError(
              "GIT_UNAVAILABLE",
              `${url} is not an http(s) URL, and Weft reaches other remotes (a local path, git://, SSH) through the system ${command}, which is not installed; install it (Debian: apt-get install git openssh-client) or use an https URL with a token`,
            )
          : error,
      );
    });
    child.on("close", (code) => {
      if (code === 0) resolve(out);
      else
        reject(
          new AppError(
            "GIT_REMOTE_FAILED",
            `git ${args
              .filter((a) => !a.startsWith("--git-dir"))
              .slice(1)
              .join(" ")} failed: ${err.trim() || `exit ${code}`}`,
          ),
        );
    });
  });
}
