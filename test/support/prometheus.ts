/**
 * A throwaway Prometheus for tests: Debian's `prometheus` on a free 127.0.0.1 port, its time-series database in
 * a temp dir, scraping one target every second with a bearer token. Skip the suite when `hasPrometheus()` is
 * false.
 *   const prom = await startPrometheus({ target: "127.0.0.1:8080", token });
 *   const [sample] = await prom.query('up{job="weft"}'); ... await prom.stop();
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./server";

const BINARY = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].find((path) => existsSync(path));
export const hasPrometheus = (): boolean => BINARY !== undefined;

/** One element of an instant query's vector: its labels and value. */
export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusHandle {
  url: string;
  /** An instant query through Prometheus' HTTP API (/api/v1/query). */
  query(expression: string): Promise<PromSample[]>;
  /** The scrape targets as Prometheus reports them (/api/v1/targets). */
  targets(): Promise<Array<{ health: string; lastError: string; scrapeUrl: string; labels: Record<string, string> }>>;
  stop(): Promise<void>;
}

export async function startPrometheus(options: { target: string; token: string; job?: string }): Promise<PrometheusHandle> {
  if (!BINARY) throw new Error("prometheus is not installed (Debian package prometheus)");
  const dir = mkdtempSync(join(tmpdir(), "weft-prom-"));
  const port = await freePort();
  const config = join(dir, "prometheus.yml");
  writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      `  - job_name: ${options.job ?? "weft"}`,
      "    authorization:",
      `      credentials: ${JSON.stringify(options.token)}`,
      "    static_configs:",
      `      - targets: [${JSON.stringify(options.target)}]`,
      "",
    ].join("\n"),
  );
  const proc = Bun.spawn(
    [BINARY, `--config.file=${config}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"],
    { stdout: "pipe", stderr: "pipe" },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`prometheus exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`prometheus did not get ready: ${await new Response(proc.stderr).text()}`);
    }
    await Bun.sleep(100);
  }
  const api = async (path: string) => {
    const body = (await (await fetch(`${url}${path}`)).json()) as { status: string; data: any; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    async query(expression) {
      const data = await api(`/api/v1/query?query=${encodeURIComponent(expression)}`);
      return (data.result as Array<{ metric: Record<string, string>; value: [number, string] }>).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async targets() {
      return (await api("/api/v1/targets")).activeTargets;
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
