/**
 * A throwaway IMAP server for tests: Debian's `dovecot-imapd` with its own configuration in a temp dir
 * (no system config), plain-text login on a free 127.0.0.1 port, a test user `weft` / `weft-test-password`
 * and a maildir in the temp dir. As root, its login processes run as `dovenull` and mail as `dovecot`
 * (Dovecot refuses root for both). Skip the suite when `hasDovecot()` is false.
 *   const imap = await startDovecot(); ... await imap.stop();
 */
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./server";

const BINARY = "/usr/sbin/dovecot";
export const hasDovecot = (): boolean => existsSync(BINARY);

export interface DovecotHandle {
  host: string;
  port: number;
  user: string;
  password: string;
  stop(): Promise<void>;
}

const idOf = async (flag: "-u" | "-g", name: string) => Number((await Bun.$`id ${flag} ${name}`.text()).trim());
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

export async function startDovecot(): Promise<DovecotHandle> {
  if (!hasDovecot()) throw new Error("dovecot is not installed (Debian package dovecot-imapd)");
  const dir = mkdtempSync(join(tmpdir(), "weft-imap-"));
  const mail = join(dir, "mail");
  mkdirSync(mail);
  const root = process.getuid?.() === 0;
  const me = userInfo().username;
  const mailUser = root ? "dovecot" : me;
  const uid = root ? await idOf("-u", "dovecot") : process.getuid!();
  const gid = root ? await idOf("-g", "dovecot") : process.getgid!();
  if (root) {
    // The per-run temp directory is private to root: Dovecot's unprivileged processes must get through it.
    chmodSync(tmpdir(), 0o755);
    chmodSync(dir, 0o755);
    chownSync(mail, uid, gid);
  }
  const password = "weft-test-password";
  writeFileSync(join(dir, "users"), `weft:{PLAIN}${password}:${uid}:${gid}::${join(mail, "weft")}::\n`);
  const port = await freePort();
  writeFileSync(
    join(dir, "dovecot.conf"),
    `
protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${mailUser}
default_login_user = ${root ? "dovenull" : me}
${root ? "" : `default_internal_group = ${userInfo().username}`}
first_valid_uid = 0
mail_location = maildir:${mail}/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN ${dir}/users
}
userdb {
  driver = passwd-file
  args = ${dir}/users
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
}
service anvil {
  chroot =
}
`,
  );
  const proc = Bun.spawn([BINARY, "-c", join(dir, "dovecot.conf"), "-F"], { stdout: "pipe", stderr: "pipe" });
  const deadline = Date.now() + 15_000;
  while (!(await listening(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`dovecot did not start: ${await new Response(proc.stderr).text()}`);
    }
    await Bun.sleep(50);
  }
  return {
    host: "127.0.0.1",
    port,
    user: "weft",
    password,
    async stop() {
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
      await proc.exited;
      clearTimeout(killer);
    },
  };
}
