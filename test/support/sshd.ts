/**
 * A throwaway SSH server for the git sync tests (docs/workflows-as-code.md, "Git sync"): Debian's `sshd`
 * (package openssh-server) on a free 127.0.0.1 port, run as the current user (no root needed) from a temp dir
 * with its own host key, public-key login only, `AuthorizedKeysFile` a temp file the test writes the key Weft
 * shows into, `StrictModes no` (the temp dir's modes are not checked). Over it the system git's
 * `git-upload-pack`/`git-receive-pack` serve bare repositories by absolute path. Stopped by pid. As root (CI),
 * sshd needs /run/sshd, which is made if missing.
 * Skip when `hasSshd()` is false.
 *   const sshd = await startSshd(); sshd.authorize(publicKey); ... await sshd.stop();
 */
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./server";
import { announceOnce } from "./announce";

const BINARY = ["/usr/sbin/sshd", "/usr/bin/sshd"].find((path) => existsSync(path));
export const hasSshd = (): boolean => BINARY !== undefined && existsSync("/usr/bin/ssh-keygen");

export function announceMissingSshd(): void {
  if (hasSshd()) return;
  announceOnce("openssh-server", "git sync over SSH tests skipped (install the Debian package openssh-server)");
}

export interface SshdHandle {
  port: number;
  /** The user the server lets in (the current user). */
  user: string;
  /** The server's host public key line (`ssh-ed25519 AAAA…`). */
  hostKey: string;
  /** Adds a public key line to the authorized keys. */
  authorize(publicKey: string): void;
  /** Every line the server logged (its -E file). */
  log(): string;
  stop(): Promise<void>;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

/** Starts sshd; `port` reuses a port (e.g. the same address with a new host key). */
export async function startSshd(options: { port?: number } = {}): Promise<SshdHandle> {
  if (!BINARY) throw new Error("sshd is not installed (Debian package openssh-server)");
  const dir = mkdtempSync(join(tmpdir(), "weft-sshd-"));
  const hostKeyFile = join(dir, "host_ed25519");
  const keygen = spawnSync("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "weft-test-host", "-f", hostKeyFile], { encoding: "utf8" });
  if (keygen.status !== 0) throw new Error(`ssh-keygen: ${keygen.stderr}`);
  const authorized = join(dir, "authorized_keys");
  writeFileSync(authorized, "", { mode: 0o600 });
  const port = options.port ?? (await freePort());
  const logFile = join(dir, "sshd.log");
  const config = join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `ListenAddress 127.0.0.1:${port}`,
      `HostKey ${hostKeyFile}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${authorized}`,
      "StrictModes no",
      "PubkeyAuthentication yes",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PermitRootLogin prohibit-password",
      "UsePAM no",
      "LogLevel VERBOSE",
      "",
    ].join("\n"),
  );
  // As root, sshd wants its privilege-separation directory, which Debian's ssh service makes when it starts
  // (RuntimeDirectory=sshd); as another user it is not needed.
  if (process.getuid?.() === 0 && !existsSync("/run/sshd")) mkdirSync("/run/sshd", { mode: 0o755 });
  // -D: stay in the foreground (stopped by pid); -e/-E: log to a file the test can read.
  const proc = spawn(BINARY, ["-D", "-f", config, "-E", logFile], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  proc.stderr.on("data", (chunk) => (err += chunk));
  const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`sshd did not start: ${err}${log()}`);
    }
    await Bun.sleep(50);
  }
  return {
    port,
    // The login name as sshd looks it up (`id -un`; Bun's os.userInfo() may not read it).
    user: spawnSync("id", ["-un"], { encoding: "utf8" }).stdout.trim(),
    hostKey: spawnSync("/usr/bin/ssh-keygen", ["-y", "-f", hostKeyFile], { encoding: "utf8" }).stdout.trim(),
    authorize: (publicKey) => appendFileSync(authorized, `${publicKey.trim()}\n`),
    log,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      process.kill(proc.pid!, "SIGTERM");
      await exited;
    },
  };
}
