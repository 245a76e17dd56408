/**
 * MQTT messages → runs: a real Mosquitto and a real `weft serve`, a workflow with an MQTT subscription
 * trigger (QoS 1, one set_fields step); N messages published as fast as the broker takes them; prints how
 * many runs per second became durable (every message's run stored before its acknowledgement).
 *
 *   bun bench/mqtt.ts [--messages 5000]
 */
import mqtt from "mqtt";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { hasMosquitto, startMosquitto } from "../test/support/mosquitto";
import { startServer } from "../test/support/server";

const { values } = parseArgs({ args: process.argv.slice(2), options: { messages: { type: "string", default: "5000" } } });
const N = Number(values.messages);
if (!hasMosquitto()) {
  console.log("mqtt bench skipped: install the Debian package mosquitto");
  process.exit(0);
}
const broker = await startMosquitto();
const server = await startServer({ env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0" } });
try {
  const post = async (path: string, body?: unknown) =>
    (await (
      await server.fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) })
    ).json()) as any;
  const conn = (await post("/api/connections", { pieceId: "mqtt", name: "bench", values: { url: broker.url } })).data.id;
  const definition = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "subscription",
      pieceId: "mqtt",
      actionId: "message_received",
      connectionId: conn,
      config: { topic: "bench/#", qos: 1 },
      nextAction: { name: "keep", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { n: "{{trigger.body.payload.n}}" } } },
    },
  };
  const wf = (await post("/api/workflows", { name: "mqtt bench", definition })).data;
  await post(`/api/workflows/${wf.id}/publish`);
  for (let i = 0; i < 100; i++) {
    const status = ((await (await server.fetch(`/api/workflows/${wf.id}/trigger`)).json()) as any).data.subscription;
    if (status?.open) break;
    await Bun.sleep(50);
  }
  const total = async () => ((await (await server.fetch(`/api/runs?workflowId=${wf.id}&limit=1`)).json()) as any).pagination.total as number;
  const sender = await mqtt.connectAsync(broker.url);
  const t0 = performance.now();
  const sends: Array<Promise<unknown>> = [];
  for (let n = 0; n < N; n++) sends.push(sender.publishAsync(`bench/s${n % 10}`, JSON.stringify({ n }), { qos: 1 }));
  await Promise.all(sends);
  const published = performance.now() - t0;
  while ((await total()) < N && performance.now() - t0 < 300_000) await Bun.sleep(100);
  const seconds = (performance.now() - t0) / 1000;
  await sender.endAsync();
  console.log(
    `mqtt, ${cpus().length} cores: ${N} QoS 1 messages published in ${(published / 1000).toFixed(1)} s; ${await total()} runs stored after ${seconds.toFixed(1)} s: ${(N / seconds).toFixed(0)} messages → runs per second`,
  );
} finally {
  await server.stop();
  await broker.stop();
}
