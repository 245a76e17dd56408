/**
 * The systemd unit `weft service install` writes, and docs/install.md shows (a test keeps the two equal): a user of
 * its own, write access to the data directory only, restarted after a crash but not after a configuration error.
 *
 *   systemdUnit({ command: ["/usr/local/bin/weft", "serve"] })  // the unit of docs/install.md
 */
export interface UnitOptions {
  /** What ExecStart runs: the executable and its arguments. */
  command: string[];
  user?: string;
  dataDir?: string;
  envFile?: string;
}

export const UNIT_DEFAULTS = { user: "weft", dataDir: "/var/lib/weft", envFile: "/etc/weft/weft.env" } as const;

/** One ExecStart argument: quoted when it holds more than plain path characters, `%` doubled (a specifier otherwise). */
function execArg(arg: string): string {
  const escaped = arg.replaceAll("%", "%%");
  return /^[\w./:@=,+%-]+$/.test(escaped) ? escaped : `"${escaped.replace(/[\\"]/g, "\\$&")}"`;
}

export function systemdUnit(options: UnitOptions): string {
  const { user, dataDir, envFile } = { ...UNIT_DEFAULTS, ...options };
  // Under /var/lib systemd creates the directory for the user at start (StateDirectory); elsewhere the operator does.
  const stateDirectory = dataDir.startsWith("/var/lib/") ? dataDir.slice("/var/lib/".length) : undefined;
  return `[Unit]
Description=Weft workflow automation
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${user}
Group=${user}
ExecStart=${options.command.map(execArg).join(" ")}
Environment=WEFT_DATA_DIR=${dataDir}
EnvironmentFile=${envFile}
WorkingDirectory=${dataDir}
${stateDirectory ? `StateDirectory=${stateDirectory}\nStateDirectoryMode=0700\n` : ""}# Restarted after a crash; a configuration error (exit code 2) is not retried every 5 s.
Restart=on-failure
RestartSec=5s
RestartPreventExitStatus=2
# SIGTERM: in-flight requests finish and the database is closed cleanly.
TimeoutStopSec=60s
LimitNOFILE=65536
UMask=0077
# Hardening: the service writes only its data directory.
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths=${dataDir}
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
CapabilityBoundingSet=
SystemCallArchitectures=native

[Install]
WantedBy=multi-user.target
`;
}
