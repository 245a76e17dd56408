/**
 * A throwaway syslog server for tests: Debian's `rsyslog` in the foreground (-n) with a config of its own in
 * a temp dir, receiving on free 127.0.0.1 ports over UDP (imudp) and TCP (imtcp, which takes octet-counted
 * frames) and writing every message's RFC 5424 fields to a file (omfile). Its own pid file (-i), so it never
 * meets a system rsyslogd. Skip the suite when `hasRsyslog()` is false.
 *   const syslog = await startRsyslog(); ... await syslog.messages(3); await syslog.stop();
 */
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./server";

const BINARY = ["/usr/sbin/rsyslogd", "/usr/bin/rsyslogd"].find((path) => existsSync(path));
export const hasRsyslog = (): boolean => BINARY !== undefined;

/** One received message, as rsyslog parsed it. */
export interface SyslogMessage {
  pri: number;
  version: string;
  timestamp: string;
  hostname: string;
  appName: string;
  procId: string;
  msgId: string;
  structuredData: string;
  msg: string;
}

export interface RsyslogHandle {
  udpPort: number;
  tcpPort: number;
  /** Waits until at least `count` messages were written (or 10 s passed), then answers all of them. */
  messages(count: number): Promise<SyslogMessage[]>;
  stop(): Promise<void>;
}

/** A free UDP port on loopback (bound, then released). */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

/** Fields separated by a character no field holds (rsyslog's template below writes them). */
const SEPARATOR = "\u001f";

/** `tcpPort`: listen there (a restarted server on the port of the one before); default a free one. */
export async function startRsyslog(options: { tcpPort?: number } = {}): Promise<RsyslogHandle> {
  if (!BINARY) throw new Error("rsyslogd is not installed (Debian package rsyslog)");
  const dir = mkdtempSync(join(tmpdir(), "weft-rsyslog-"));
  const udpPort = await freeUdpPort();
  const tcpPort = options.tcpPort ?? (await freePort());
  const out = join(dir, "messages.log");
  const fields = ["%PRI%", "%PROTOCOL-VERSION%", "%TIMESTAMP:::date-rfc3339%", "%HOSTNAME%", "%APP-NAME%", "%PROCID%", "%MSGID%", "%STRUCTURED-DATA%", "%msg%"];
  writeFileSync(
    join(dir, "rsyslog.conf"),
    [
      `global(workDirectory="${dir}" maxMessageSize="64k" parser.escapeControlCharactersOnReceive="off")`,
      'module(load="imudp")',
      'module(load="imtcp")',
      `input(type="imudp" address="127.0.0.1" port="${udpPort}")`,
      `input(type="imtcp" address="127.0.0.1" port="${tcpPort}")`,
      // Fields joined by a literal unit separator (U+001F), which no field can contain.
      `template(name="fields" type="string" string="${fields.join(SEPARATOR)}\\n")`,
      `*.* action(type="omfile" file="${out}" template="fields")`,
      "",
    ].join("\n"),
  );
  const proc = Bun.spawn([BINARY, "-n", "-f", join(dir, "rsyslog.conf"), "-i", join(dir, "rsyslogd.pid")], { stdout: "pipe", stderr: "pipe" });
  const deadline = Date.now() + 10_000;
  while (!(await listening(tcpPort))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`rsyslogd did not start: ${await new Response(proc.stderr).text()}`);
    }
    await Bun.sleep(50);
  }
  const read = (): SyslogMessage[] => {
    if (!existsSync(out)) return [];
    return readFileSync(out, "utf8")
      .split("\n")
      .filter((line) => line.includes(SEPARATOR))
      .map((line) => {
        const [pri, version, timestamp, hostname, appName, procId, msgId, structuredData, ...msg] = line.split(SEPARATOR);
        return {
          pri: Number(pri),
          version: version!,
          timestamp: timestamp!,
          hostname: hostname!,
          appName: appName!,
          procId: procId!,
          msgId: msgId!,
          structuredData: structuredData!,
          msg: msg.join(SEPARATOR).trim(),
        };
      });
  };
  return {
    udpPort,
    tcpPort,
    async messages(count) {
      const until = Date.now() + 10_000;
      let got = read();
      while (got.length < count && Date.now() < until) {
        await Bun.sleep(50);
        got = read();
      }
      return got;
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
