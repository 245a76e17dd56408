/**
 * The mqtt piece against a real Mosquitto (Debian `mosquitto`) started by the test, and a real Weft server:
 * a workflow publishes and a test subscriber receives it; a subscription trigger on a wildcard filter
 * starts one run per message; 1,000 QoS 1 messages become exactly 1,000 runs with a SIGKILL and restart
 * of Weft in the middle (the persistent session redelivers what was not acknowledged, and nothing
 * acknowledged is lost); messages stored whose acknowledgements were lost are not stored twice when the
 * broker redelivers them; a broker on a blocked address is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import mqtt from "mqtt";
import { announceMissingMosquitto, hasMosquitto, startMosquitto, type MosquittoHandle } from "../support/mosquitto";
import { startServer, type ServerHandle } from "../support/server";

/** A TCP proxy to the broker on loopback; while `swallowUpstream` is set, what clients send is dropped. `sent` is what they sent. */
async function lossyProxy(brokerPort: number) {
  const state = { swallowUpstream: false, sent: [] as Buffer[] };
  const server = Bun.listen<{ upstream?: Socket<unknown>; pending: Uint8Array[] }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async open(client) {
        client.data = { pending: [] };
        client.data.upstream = await Bun.connect({
          hostname: "127.0.0.1",
          port: brokerPort,
          socket: {
            data: (_, bytes) => void client.write(bytes),
            close: () => void client.end(),
            error: () => void client.end(),
          },
        });
        for (const bytes of client.data.pending) client.data.upstream.write(bytes);
      },
      data(client, bytes) {
        state.sent.push(Buffer.from(bytes));
        if (state.swallowUpstream) return;
        if (client.data.upstream) client.data.upstream.write(bytes);
        else client.data.pending.push(new Uint8Array(bytes));
      },
      close: (client) => void client.data.upstream?.end(),
      error: (client) => void client.data.upstream?.end(),
    },
  });
  return Object.assign(state, { url: `mqtt://127.0.0.1:${server.port}`, stop: () => server.stop(true) });
}

announceMissingMosquitto();

const env = { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0" };

describe.skipIf(!hasMosquitto())("mqtt", () => {
  let broker: MosquittoHandle;
  let server: ServerHandle;
  beforeAll(async () => {
    broker = await startMosquitto();
    server = await startServer({ env });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    await broker?.stop();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await server.fetch(path, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  let connections = 0;
  const connection = async (url = broker.url, extra: Record<string, unknown> = {}) =>
    (await api("POST", "/api/connections", { pieceId: "mqtt", name: `broker ${++connections}`, values: { url, ...extra } })).data.id as string;
  const runsOf = async (workflowId: string) => {
    const runs: any[] = [];
    for (let page = 1; ; page++) {
      const res = await api("GET", `/api/runs?workflowId=${workflowId}&limit=100&page=${page}`);
      runs.push(...res.data);
      if (page >= res.pagination.totalPages) return runs;
    }
  };
  /** Creates and publishes a workflow started by the MQTT trigger on `topic`; resolves once its subscription is open. */
  const subscribedWorkflow = async (name: string, connectionId: string, topic: string, nextAction?: unknown) => {
    const trigger = {
      name: "trigger",
      type: "subscription",
      pieceId: "mqtt",
      actionId: "message_received",
      connectionId,
      config: { topic, qos: 1 },
      nextAction,
    };
    const wf = (await api("POST", "/api/workflows", { name, definition: { schemaVersion: 2, trigger } })).data;
    await api("POST", `/api/workflows/${wf.id}/publish`);
    let status: any;
    for (const openBy = Date.now() + 10_000; Date.now() < openBy; await Bun.sleep(50)) {
      status = (await api("GET", `/api/workflows/${wf.id}/trigger`)).data.subscription;
      if (status?.open) break;
    }
    expect(status).toMatchObject({ open: true, failures: 0 });
    return wf.id as string;
  };
  /** The `n` of every run's message payload. */
  const payloadNumbers = async (workflowId: string) =>
    Promise.all((await runsOf(workflowId)).map(async (r) => (await api("GET", `/api/runs/${r.id}`)).data.triggerData.body.payload.n as number));

  test("a workflow publishes a JSON message that a subscriber receives", async () => {
    const listener = await mqtt.connectAsync(broker.url);
    const received: Array<{ topic: string; text: string; retain: boolean }> = [];
    listener.on("message", (topic, message, packet) => received.push({ topic, text: message.toString(), retain: packet.retain }));
    await listener.subscribeAsync("home/#", { qos: 1 });
    const conn = await connection();
    const definition = {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "manual",
        config: {},
        nextAction: {
          name: "pub",
          type: "PIECE",
          pieceId: "mqtt",
          actionId: "publish",
          connectionId: conn,
          config: { topic: "home/light/set", payload_type: "json", payload: { on: "{{trigger.body.on}}" }, qos: 1 },
        },
      },
    };
    const wf = (await api("POST", "/api/workflows", { name: "publisher", definition })).data;
    const run = (await api("POST", `/api/workflows/${wf.id}/run?environment=test&wait=10`, { on: true })).data;
    expect(run.status).toBe("completed");
    expect(run.steps[0].outputData).toMatchObject({ topic: "home/light/set", qos: 1, retain: false });
    const deadline = Date.now() + 5_000;
    while (received.length === 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(received).toEqual([{ topic: "home/light/set", text: '{"on":true}', retain: false }]);
    await listener.endAsync();
  });

  test("1,000 QoS 1 messages on a wildcard filter: 1,000 runs, none lost or doubled, across a SIGKILL of Weft", async () => {
    const wfId = await subscribedWorkflow("readings", await connection(), "sensors/+/reading", {
      name: "keep",
      type: "PIECE",
      pieceId: "data",
      actionId: "set_fields",
      config: { fields: { n: "{{trigger.body.payload.n}}", topic: "{{trigger.body.topic}}" } },
    });

    const sender = await mqtt.connectAsync(broker.url);
    // Bursts of 50 at once: Weft stores several messages at a time, so the kill finds many stored but not yet acknowledged.
    const send = async (from: number, to: number) => {
      for (let n = from; n < to; n += 50) {
        const burst = Array.from({ length: Math.min(50, to - n) }, (_, i) => n + i);
        await Promise.all(burst.map((k) => sender.publishAsync(`sensors/s${k % 5}/reading`, JSON.stringify({ n: k }), { qos: 1 })));
      }
    };
    await send(0, 400);
    // Kill Weft while messages are arriving; publish more while it is down, then start it again.
    const old = server;
    await old.stop("SIGKILL");
    await send(400, 700);
    server = await startServer({ dataDir: old.dataDir, env });
    await send(700, 1000);
    await sender.endAsync();

    // Wait until 1,000 runs exist and none is still going (counts, not pages: pages shift while runs arrive).
    const deadline = Date.now() + 90_000;
    const total = async (query: string) => (await api("GET", `/api/runs?workflowId=${wfId}&limit=1${query}`)).pagination.total as number;
    while (Date.now() < deadline) {
      if ((await total("")) >= 1000 && (await total("&status=completed")) >= 1000) break;
      await Bun.sleep(250);
    }
    await Bun.sleep(500); // a redelivered duplicate would have arrived by now
    const runs = await runsOf(wfId);
    const ns = await payloadNumbers(wfId);
    const seen = new Map<number, number>();
    for (const n of ns) seen.set(n, (seen.get(n) ?? 0) + 1);
    const missing = Array.from({ length: 1000 }, (_, n) => n).filter((n) => !seen.has(n));
    const doubled = [...seen].filter(([, count]) => count > 1).map(([n]) => n);
    expect(missing).toEqual([]);
    expect(doubled).toEqual([]);
    expect(runs.length).toBe(1000);
    expect(runs.every((r) => r.triggerType === "subscription" && r.status === "completed")).toBe(true);
  }, 120_000);

  test("messages stored whose acknowledgements were lost are not stored again when the broker redelivers them", async () => {
    // Weft reaches the broker through a proxy that can swallow what Weft sends (its PUBACKs) while still
    // passing on what the broker sends: runs are stored, the broker never hears of it, and after a
    // SIGKILL it redelivers every one of them with the DUP flag.
    const proxy = await lossyProxy(broker.port);
    try {
      const wfId = await subscribedWorkflow("lost acks", await connection(proxy.url), "lost/#");

      proxy.swallowUpstream = true;
      const sender = await mqtt.connectAsync(broker.url);
      await Promise.all(Array.from({ length: 30 }, (_, n) => sender.publishAsync(`lost/t${n % 3}`, JSON.stringify({ n }), { qos: 1 })));
      const total = async () => (await api("GET", `/api/runs?workflowId=${wfId}&limit=1`)).pagination.total as number;
      // The broker holds back what exceeds its in-flight window (Mosquitto: 20) until acknowledgements come.
      let stored = 0;
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(200)) {
        const now = await total();
        if (now > 0 && now === stored) break;
        stored = now;
      }
      expect(stored).toBeGreaterThan(1);
      expect(stored).toBeLessThan(30);

      const old = server;
      await old.stop("SIGKILL");
      proxy.swallowUpstream = false;
      server = await startServer({ dataDir: old.dataDir, env });
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && (await total()) < 30; ) await Bun.sleep(100);
      await Bun.sleep(500); // a duplicate would have arrived by now
      const ns = await payloadNumbers(wfId);
      expect(ns.toSorted((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, n) => n));
      await sender.endAsync();
    } finally {
      proxy.stop();
    }
  }, 60_000);

  test("the connection's client id prefix starts the id the broker sees; a prefix with a space is refused, saying what is allowed", async () => {
    const proxy = await lossyProxy(broker.port);
    try {
      const wfId = await subscribedWorkflow("prefixed", await connection(proxy.url, { client_id: "homelab" }), "prefixed/#");
      const connect = Buffer.concat(proxy.sent).toString("latin1");
      expect(connect).toContain(`homelab-${wfId.replaceAll("-", "").slice(0, 16)}`);
      expect(connect).not.toContain("weft-");
    } finally {
      proxy.stop();
    }
    const conn = await connection(broker.url, { client_id: "home lab" });
    const trigger = {
      name: "trigger",
      type: "subscription",
      pieceId: "mqtt",
      actionId: "message_received",
      connectionId: conn,
      config: { topic: "x/#", qos: 1 },
    };
    const wf = (await api("POST", "/api/workflows", { name: "bad prefix", definition: { schemaVersion: 2, trigger } })).data;
    await api("POST", `/api/workflows/${wf.id}/publish`);
    let status: any;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && !status?.lastError; await Bun.sleep(50))
      status = (await api("GET", `/api/workflows/${wf.id}/trigger`)).data.subscription;
    expect(status.lastError).toContain('the client id prefix "home lab" must be 1–64 visible ASCII characters without spaces');
  });

  test("a broker on a blocked address is refused by the SSRF policy, and the trigger shows the failure", async () => {
    const strict = await startServer({ env: { WEFT_LOG_LEVEL: "warn" } });
    try {
      const res = await strict.fetch("/api/connections", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ pieceId: "mqtt", name: "lan broker", values: { url: broker.url } }),
      });
      const conn = ((await res.json()) as any).data.id;
      const definition = {
        schemaVersion: 2,
        trigger: { name: "trigger", type: "subscription", pieceId: "mqtt", actionId: "message_received", connectionId: conn, config: { topic: "x/#", qos: 0 } },
      };
      const wf = (
        (await (
          await strict.fetch("/api/workflows", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: "blocked", definition }),
          })
        ).json()) as any
      ).data;
      await strict.fetch(`/api/workflows/${wf.id}/publish`, { method: "POST" });
      let status: any;
      const by = Date.now() + 10_000;
      do {
        status = ((await (await strict.fetch(`/api/workflows/${wf.id}/trigger`)).json()) as any).data.subscription;
        if (status?.lastError) break;
        await Bun.sleep(50);
      } while (Date.now() < by);
      expect(status.open).toBe(false);
      expect(status.lastError).toContain("WEFT_ALLOW_CIDRS");
    } finally {
      await strict.stop();
    }
  }, 30_000);
});
