/**
 * A real Prometheus scrapes a real `weft serve`, each on a free loopback port, as an operator would set it up:
 * with a token that holds only metrics:read. The target is up, and a webhook run shows in Weft's series
 * queried through Prometheus' own HTTP API. Skipped, with one line, without Debian's prometheus.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hasPrometheus, type PrometheusHandle, type PromSample, startPrometheus } from "../support/prometheus";
import { startServer, type ServerHandle } from "../support/server";
import { definition, webhookTrigger } from "../triggers/harness";

if (!hasPrometheus()) console.log("prometheus: tests skipped (install the Debian package prometheus)");

describe.skipIf(!hasPrometheus())("Prometheus scraping weft serve", () => {
  let server: ServerHandle;
  let prom: PrometheusHandle;

  const json = async (res: Response) => ((await res.json()) as any).data;

  beforeAll(async () => {
    server = await startServer({ env: { WEFT_LOG_LEVEL: "warn" } });
    const minted = await server.fetch("/api/tokens", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "prometheus", scopes: ["metrics:read"] }),
    });
    expect(minted.status).toBe(201);
    prom = await startPrometheus({ target: `127.0.0.1:${server.port}`, token: (await json(minted)).token });
  }, 60_000);

  afterAll(async () => {
    await prom?.stop();
    await server?.stop();
  });

  /** Asks Prometheus `expression` until `accept` takes the answer, for up to `ms` (scrapes come every second). */
  async function queryUntil(expression: string, accept: (samples: PromSample[]) => boolean, ms = 20_000): Promise<PromSample[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const samples = await prom.query(expression);
      if (accept(samples) || Date.now() > deadline) return samples;
      await Bun.sleep(250);
    }
  }

  test("the target is up, and a webhook run shows in weft_runs_finished_total and the step histogram", async () => {
    const step = { name: "greet", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { hello: "{{trigger.body.name}}" } } };
    const post = (path: string, body?: unknown) =>
      server.fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    const workflow = await json(await post("/api/workflows", { name: "scraped", definition: definition(webhookTrigger(), step) }));
    const published = await json(await post(`/api/workflows/${workflow.id}/publish`));
    const called = await fetch(`${server.url}/webhook/${published.webhookToken}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Ada" }),
    });
    expect(called.status).toBe(202);
    const runId = (await json(called)).runId;
    let status = "";
    for (const deadline = Date.now() + 10_000; status !== "completed" && Date.now() < deadline; await Bun.sleep(50)) {
      status = (await json(await server.fetch(`/api/runs/${runId}`))).status;
    }
    expect(status).toBe("completed");

    const finished = await queryUntil('weft_runs_finished_total{job="weft",status="completed",trigger_type="webhook"}', (s) => s[0]?.value === 1);
    expect(finished.map((s) => s.value)).toEqual([1]);
    expect(finished[0]!.metric.instance).toBe(`127.0.0.1:${server.port}`);
    const steps = await queryUntil('sum(weft_step_duration_seconds_count{piece="data",action="set_fields"})', (s) => s[0]?.value === 1);
    expect(steps.map((s) => s.value)).toEqual([1]);
    const webhooks = await queryUntil('sum(weft_webhook_request_duration_seconds_count{code="202"})', (s) => s[0]?.value === 1);
    expect(webhooks.map((s) => s.value)).toEqual([1]);

    expect((await prom.query('up{job="weft"}')).map((s) => s.value)).toEqual([1]);
    const [target] = await prom.targets();
    expect(target).toMatchObject({ health: "up", lastError: "", scrapeUrl: `http://127.0.0.1:${server.port}/metrics` });
    // The process metrics come along: an operator's memory panel has data.
    expect((await prom.query('process_resident_memory_bytes{job="weft"}'))[0]!.value).toBeGreaterThan(10 * 1024 * 1024);
  }, 60_000);
});
