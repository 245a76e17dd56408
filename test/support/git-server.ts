/**
 * Throwaway git remotes for the git sync tests (docs/workflows-as-code.md, "Git sync"), from Debian's `git`:
 * bare repositories in a temp dir, served by `git daemon` (git://, push enabled) and by `git http-backend` (git's
 * own smart HTTP server, a CGI program) behind a small CGI bridge on node:http that asks for a token by HTTP Basic
 * auth, as a git host does. Both on free 127.0.0.1 ports, stopped by pid. Skip when `hasGit()` is false.
 *   const daemon = await startGitDaemon(root); ... await daemon.stop();
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./server";
import { announceOnce } from "./announce";

const GIT = "/usr/bin/git";
const CORE = "/usr/lib/git-core";
export const hasGit = (): boolean => existsSync(GIT) && existsSync(`${CORE}/git-daemon`) && existsSync(`${CORE}/git-http-backend`);

export function announceMissingGit(): void {
  if (hasGit()) return;
  announceOnce("git", "git sync tests skipped (install the Debian package git)");
}

/** Runs the system git; throws with its stderr. */
export function git(args: string[], cwd?: string): string {
  const result = spawnSync(GIT, args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Other",
      GIT_AUTHOR_EMAIL: "other@example.test",
      GIT_COMMITTER_NAME: "Other",
      GIT_COMMITTER_EMAIL: "other@example.test",
    },
  });
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/** A directory of bare repositories; `repo(name)` makes one (its default branch `main`). */
export function gitRoot() {
  const root = mkdtempSync(join(tmpdir(), "weft-git-"));
  return {
    root,
    repo(name: string): string {
      const dir = join(root, name);
      mkdirSync(dir, { recursive: true });
      git(["init", "--bare", "--initial-branch=main", dir]);
      return dir;
    },
  };
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

export interface GitServer {
  /** The URL of repository `name` on this server. */
  url(name: string): string;
  stop(): Promise<void>;
}

/** `git daemon` serving every repository of `root` over git://, with push (receive-pack) enabled. */
export async function startGitDaemon(root: string): Promise<GitServer> {
  const port = await freePort();
  const proc = spawn(
    `${CORE}/git-daemon`,
    ["--reuseaddr", "--export-all", "--enable=receive-pack", `--base-path=${root}`, "--listen=127.0.0.1", `--port=${port}`, root],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let err = "";
  proc.stderr.on("data", (chunk) => (err += chunk));
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`git daemon did not start: ${err}`);
    }
    await Bun.sleep(50);
  }
  return {
    url: (name) => `git://127.0.0.1:${port}/${name}`,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      process.kill(proc.pid!, "SIGTERM");
      await exited;
    },
  };
}

/**
 * `git http-backend` behind a CGI bridge: every request must carry HTTP Basic auth whose password is `token`
 * (401 with WWW-Authenticate otherwise); the request becomes the CGI environment and body, the program's answer
 * (CGI headers, a blank line, the body) the response. Push is allowed to an authenticated user (REMOTE_USER).
 */
export async function startHttpBackend(root: string, token: string): Promise<GitServer & { requests: string[] }> {
  const requests: string[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    const auth = req.headers.authorization ?? "";
    const password = auth.startsWith("Basic ") ? Buffer.from(auth.slice(6), "base64").toString().split(":").slice(1).join(":") : "";
    if (password !== token) {
      res.writeHead(401, { "www-authenticate": 'Basic realm="git"' }).end("token required");
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const cgi = spawn(`${CORE}/git-http-backend`, [], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        REMOTE_USER: "weft",
        REMOTE_ADDR: "127.0.0.1",
        REQUEST_METHOD: req.method ?? "GET",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        CONTENT_LENGTH: String(body.length),
        HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
        HTTP_GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        SERVER_PROTOCOL: "HTTP/1.1",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    cgi.stdin.end(body);
    const out: Buffer[] = [];
    for await (const chunk of cgi.stdout) out.push(chunk as Buffer);
    const answer = Buffer.concat(out);
    const split = answer.indexOf("\r\n\r\n") >= 0 ? answer.indexOf("\r\n\r\n") : answer.indexOf("\n\n");
    const gap = answer.indexOf("\r\n\r\n") >= 0 ? 4 : 2;
    const headers: Record<string, string> = {};
    let status = 200;
    for (const line of answer.subarray(0, split).toString().split(/\r?\n/)) {
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "status") status = Number.parseInt(value, 10);
      else headers[name] = value;
    }
    res.writeHead(status, headers).end(answer.subarray(split + gap));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    requests,
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
