/** `weft service install`: the systemd unit it writes, the one docs/install.md shows, and what it refuses. Never calls systemctl. */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { systemdUnit } from "../../src/lib/systemd-unit";

const ROOT = resolve(import.meta.dir, "../..");
const MAIN = join(ROOT, "src/main.ts");
const SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze";

const weft = (...args: string[]) => Bun.spawnSync([process.execPath, MAIN, ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH } });

/** The key=value lines of a unit, comments and blank lines left out. */
const settings = (unit: string) => unit.split("\n").filter((line) => line && !line.startsWith("#"));

describe("weft service install", () => {
  test("writes the hardened unit for this program, and says what is left to do", () => {
    const path = join(mkdtempSync(join(tmpdir(), "weft-unit-")), "weft.service");
    const run = weft("service", "install", "--path", path);
    expect(run.stderr.toString()).toBe("");
    expect(run.exitCode).toBe(0);
    expect(run.stdout.toString()).toContain("systemctl daemon-reload && systemctl enable --now weft");
    expect(run.stdout.toString()).toContain("useradd --system --home-dir /var/lib/weft --shell /usr/sbin/nologin weft");
    const unit = readFileSync(path, "utf8");
    expect(statSync(path).mode & 0o777).toBe(0o644);
    const lines = settings(unit);
    // From source the unit runs Bun with src/main.ts; the compiled binary names itself (binary.test.ts).
    expect(lines).toContain(`ExecStart=${process.execPath} ${MAIN} serve`);
    for (const line of [
      "User=weft",
      "Environment=WEFT_DATA_DIR=/var/lib/weft",
      "EnvironmentFile=/etc/weft/weft.env",
      "StateDirectory=weft",
      "ReadWritePaths=/var/lib/weft",
      "ProtectSystem=strict",
      "NoNewPrivileges=yes",
      "PrivateTmp=yes",
      "ProtectHome=yes",
      "Restart=on-failure",
      "RestartPreventExitStatus=2",
    ])
      expect(lines).toContain(line);
    // JavaScriptCore's compiler writes machine code and runs it.
    expect(unit).not.toContain("MemoryDenyWriteExecute");
  });

  test.skipIf(!existsSync(SYSTEMD_ANALYZE))("writes a unit that systemd-analyze verify accepts", () => {
    const path = join(mkdtempSync(join(tmpdir(), "weft-unit-")), "weft.service");
    expect(weft("service", "install", "--path", path, "--user", "automation", "--data-dir", "/srv/weft").exitCode).toBe(0);
    const verify = Bun.spawnSync([SYSTEMD_ANALYZE, "verify", path], { stdout: "pipe", stderr: "pipe" });
    expect(verify.stderr.toString()).toBe("");
    expect(verify.exitCode).toBe(0);
  });

  test("takes the user, the data directory and the settings file; outside /var/lib the operator makes the directory", () => {
    const path = join(mkdtempSync(join(tmpdir(), "weft-unit-")), "automation.service");
    const run = weft("service", "install", "--path", path, "--user", "automation", "--data-dir", "/srv/weft", "--env-file", "/etc/automation.env");
    expect(run.exitCode).toBe(0);
    expect(run.stdout.toString()).toContain("systemctl enable --now automation");
    const lines = settings(readFileSync(path, "utf8"));
    for (const line of ["User=automation", "Group=automation", "ReadWritePaths=/srv/weft", "WorkingDirectory=/srv/weft", "EnvironmentFile=/etc/automation.env"])
      expect(lines).toContain(line);
    expect(lines.some((line) => line.startsWith("StateDirectory="))).toBe(false);
  });

  test("refuses to replace a file without --force, a data directory the unit hides, and a bad user name", () => {
    const path = join(mkdtempSync(join(tmpdir(), "weft-unit-")), "weft.service");
    writeFileSync(path, "mine");
    const kept = weft("service", "install", "--path", path);
    expect(kept.exitCode).toBe(2);
    expect(kept.stderr.toString()).toBe(`weft: ${path} exists; add --force to replace it\n`);
    expect(readFileSync(path, "utf8")).toBe("mine");
    expect(weft("service", "install", "--path", path, "--force").exitCode).toBe(0);
    expect(weft("service", "install", "--path", `${path}.2`, "--data-dir", "/home/me/weft").stderr.toString()).toContain("ProtectHome");
    expect(weft("service", "install", "--path", `${path}.2`, "--user", "Root User").stderr.toString()).toContain("is not a system user name");
    expect(weft("service", "start").stderr.toString()).toContain("usage: weft service install");
  });

  test("docs/install.md shows the unit it writes for /usr/local/bin/weft", () => {
    const docs = readFileSync(join(ROOT, "docs/install.md"), "utf8");
    const shown = /```ini\n([\s\S]*?)```/.exec(docs)?.[1];
    expect(shown).toBe(systemdUnit({ command: ["/usr/local/bin/weft", "serve"] }));
  });

  test("quotes an executable path with spaces, and doubles %", () => {
    const unit = systemdUnit({ command: ["/opt/my apps/weft", "serve"] });
    expect(settings(unit)).toContain('ExecStart="/opt/my apps/weft" serve');
    expect(settings(systemdUnit({ command: ["/opt/100%/weft", "serve"] }))).toContain("ExecStart=/opt/100%%/weft serve");
  });
});
