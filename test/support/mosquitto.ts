/**
 * A throwaway MQTT broker for tests: Debian's `mosquitto` on a free 127.0.0.1 port, anonymous access,
 * persistence in a temp dir (so persistent sessions survive as they would on a real broker). Skip the
 * suite when `hasMosquitto()` is false.
 *   const broker = await startMosquitto(); ... await broker.stop();
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./server";
import { announceOnce } from "./announce";

const BINARY = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].find((path) => existsSync(path));
export const hasMosquitto = (): boolean => BINARY !== undefined;

/** Says once per test run that the suites needing mosquitto are skipped, however many files need it. */
export function announceMissingMosquitto(): void {
  if (hasMosquitto()) return;
  announceOnce("mosquitto", "mqtt and zigbee2mqtt tests skipped (install the Debian package mosquitto)");
}

export interface MosquittoHandle {
  url: string;
  port: number;
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

export async function startMosquitto(): Promise<MosquittoHandle> {
  if (!BINARY) throw new Error("mosquitto is not installed (Debian package mosquitto)");
  const dir = mkdtempSync(join(tmpdir(), "weft-mqtt-"));
  const port = await freePort();
  const conf = join(dir, "mosquitto.conf");
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      "allow_anonymous true",
      "persistence true",
      `persistence_location ${dir}/`,
      "max_queued_messages 100000",
      ...(process.getuid?.() === 0 ? ["user root"] : []),
      "",
    ].join("\n"),
  );
  const proc = Bun.spawn([BINARY, "-c", conf], { stdout: "pipe", stderr: "pipe" });
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`mosquitto did not start: ${await new Response(proc.stderr).text()}`);
    }
    await Bun.sleep(50);
  }
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
