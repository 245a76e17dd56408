/** `weft serve` over real sockets: the scheduler runs on its own timer; webhooks answer on the public URL. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../support/server";

let s: ServerHandle;
beforeAll(async () => {
  s = await startServer({ env: { WEFT_SCHEDULE_MIN_INTERVAL: "1", WEFT_LOG_LEVEL: "warn" } });
});
afterAll(async () => {
  await s.stop();
});

async function publish(name: string, trigger: unknown, nextAction: unknown) {
  const created = (await (
    await s.fetch("/api/workflows", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        name,
        definition: { schemaVersion: 2, trigger: { ...(trigger as object), nextAction }, settings: {}, variables: {}, annotations: null, pinnedData: {} },
      }),
    })
  ).json()) as any;
  const published = (await (await s.fetch(`/api/workflows/${created.data.id}/publish`, { method: "POST" })).json()) as any;
  expect(published.data.status).toBe("active");
  return published.data;
}

test("a live schedule fires on its own once the server runs", async () => {
  const wf = await publish(
    "every second",
    { name: "trigger", type: "cron", pieceId: "schedule", actionId: "cron", config: { expression: "* * * * * *" } },
    { name: "note", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { at: "{{trigger.scheduledAt}}" } } },
  );
  let runs: any[] = [];
  const deadline = Date.now() + 6_000;
  while (runs.length < 2 && Date.now() < deadline) {
    await Bun.sleep(200);
    runs = ((await (await s.fetch(`/api/runs?workflowId=${wf.id}`)).json()) as any).data;
  }
  expect(runs.length).toBeGreaterThanOrEqual(2);
  expect(new Set(runs.map((r) => r.triggerData.scheduledAt)).size).toBe(runs.length);
  expect((await s.fetch(`/api/workflows/${wf.id}/unpublish`, { method: "POST" })).status).toBe(200);
});

test("a synchronous webhook answers with the respond step over the socket", async () => {
  const wf = await publish(
    "greet",
    { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} },
    {
      name: "greet",
      type: "PIECE",
      pieceId: "data",
      actionId: "set_fields",
      config: { fields: { greeting: "hello {{trigger.body.name}}" } },
      nextAction: { name: "reply", type: "PIECE", pieceId: "webhook", actionId: "respond", config: { status: 200, body: "{{greet.output}}" } },
    },
  );
  expect(wf.webhookUrl.startsWith(s.url)).toBe(true);
  const res = await fetch(wf.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Ada" }) });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ greeting: "hello Ada" });
  expect(res.headers.get("x-weft-run-id")).toMatch(/^[0-9a-f-]{36}$/);
});
