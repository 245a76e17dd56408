/**
 * A real Weft server and a loopback Home Assistant (test/support/home-assistant.ts, speaking HA's documented
 * WebSocket and REST messages; HA itself cannot be installed here): a connection is checked, the
 * call-service dropdowns load through the API, and a published "state changed → call service" workflow
 * turns a light on when the door opens — also after HA dropped the connection, when Weft's subscription
 * host has opened it again, authenticated and subscribed anew.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type HomeAssistantFixture, startHomeAssistant } from "../support/home-assistant";
import { type ServerHandle, startServer } from "../support/server";

const env = { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0" };

describe("home-assistant workflow", () => {
  let ha: HomeAssistantFixture;
  let server: ServerHandle;
  beforeAll(async () => {
    ha = startHomeAssistant();
    server = await startServer({ env });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    ha?.stop();
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
  const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> => {
    for (const deadline = Date.now() + 15_000; ; await Bun.sleep(50)) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    }
  };

  test("door opens → porch light on, before and after Home Assistant drops the connection", async () => {
    const conn = (await api("POST", "/api/connections", { pieceId: "home-assistant", name: "home", values: { url: ha.url, token: ha.token } })).data.id;
    expect((await api("POST", `/api/connections/${conn}/test`)).data).toMatchObject({ ok: true });

    const options = (prop: string, config: Record<string, unknown>) =>
      api("POST", `/api/pieces/home-assistant/actions/call_service/options/${prop}`, { connectionId: conn, config });
    expect((await options("domain", {})).data.options.map((o: any) => o.value)).toContain("light");
    expect((await options("service", { domain: "light" })).data.options.map((o: any) => o.value)).toEqual(["toggle", "turn_off", "turn_on"]);
    expect((await options("entity_id", { domain: "light" })).data.options).toContainEqual({ label: "Porch light (light.porch)", value: "light.porch" });

    const trigger = {
      name: "trigger",
      type: "subscription",
      pieceId: "home-assistant",
      actionId: "state_changed",
      connectionId: conn,
      config: { entity_id: "binary_sensor.door", to: "on" },
      nextAction: {
        name: "porch",
        type: "PIECE",
        pieceId: "home-assistant",
        actionId: "call_service",
        connectionId: conn,
        config: { domain: "light", service: "turn_on", entity_id: "light.porch", data: { flash: "short", reason: "{{trigger.body.entity_id}}" } },
        nextAction: {
          name: "say",
          type: "PIECE",
          pieceId: "home-assistant",
          actionId: "render_template",
          connectionId: conn,
          // HA's own {{ }} inside a Weft string literal reaches HA untouched (docs/pieces/home-assistant.md).
          config: { template: `{{ "Outside {{ states('sensor.outside_temperature') }} °C, door " & trigger.body.to }}` },
        },
      },
    };
    const wf = (await api("POST", "/api/workflows", { name: "door → porch", definition: { schemaVersion: 2, trigger } })).data;
    await api("POST", `/api/workflows/${wf.id}/publish`);
    const subscription = () => api("GET", `/api/workflows/${wf.id}/trigger`).then((r) => r.data.subscription);
    await until(subscription, (s) => s?.open === true, "the subscription to open");
    const runs = () => api("GET", `/api/runs?workflowId=${wf.id}&limit=10`).then((r) => r.data as any[]);

    ha.setState("binary_sensor.door", "on");
    await until(runs, (list) => list.length === 1 && list[0].status === "completed", "the first run");
    expect(ha.calls.at(-1)).toEqual({
      domain: "light",
      service: "turn_on",
      service_data: { flash: "short", reason: "binary_sensor.door" },
      target: { entity_id: "light.porch" },
    });
    expect(ha.states.get("light.porch")!.state).toBe("on");
    const first = (await api("GET", `/api/runs/${(await runs())[0].id}`)).data;
    expect(first.triggerData.body).toMatchObject({ entity_id: "binary_sensor.door", from: "off", to: "on" });
    expect(first.steps.find((s: any) => s.nodeId === "say")?.outputData).toEqual({ result: "Outside 4.5 °C, door on" });

    const openedAt = (await subscription()).since;
    ha.dropConnections();
    // The host sees the subscription fail, waits its back-off, connects again and subscribes anew.
    await until(subscription, (s) => s?.open === true && s.since !== openedAt, "the subscription to open again");
    await until(
      async () => ha.connections(),
      (c) => c.length === 1 && c[0] === 1,
      "a new authenticated socket with one subscription",
    );

    ha.setState("light.porch", "off");
    ha.setState("binary_sensor.door", "off");
    ha.setState("binary_sensor.door", "on");
    await until(runs, (list) => list.length === 2 && list.every((r) => r.status === "completed"), "the second run");
    expect(ha.states.get("light.porch")!.state).toBe("on");
  }, 60_000);
});
