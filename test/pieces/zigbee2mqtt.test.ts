/**
 * The Zigbee2MQTT helpers of the mqtt piece and the two Zigbee2MQTT templates, end to end: a real Mosquitto
 * (Debian `mosquitto`, skipped with one line when missing) and a real Weft server. Zigbee2MQTT itself is not
 * run: a test MQTT client plays it, publishing devices' states as Zigbee2MQTT documents them (its "MQTT
 * topics and messages": a device's state as JSON on zigbee2mqtt/<friendly name> — occupancy for a motion
 * sensor, contact for a door sensor, false when open — and commands received on zigbee2mqtt/<name>/set).
 * The phone is a loopback server answering ntfy's publish route.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import zigbeeDoorAwayPhone from "../../src/core/templates/catalog/zigbee-door-away-phone";
import zigbeeMotionLight from "../../src/core/templates/catalog/zigbee-motion-light";
import { announceMissingMosquitto, hasMosquitto, type MosquittoHandle, startMosquitto } from "../support/mosquitto";
import { type ServerHandle, startServer } from "../support/server";
import { loopback } from "./fake-context";

announceMissingMosquitto();

const env = { WEFT_ALLOW_CIDRS: "127.0.0.0/8", WEFT_LOG_LEVEL: "warn", WEFT_RATE_LIMIT: "0", WEFT_FLOOD_LIMIT: "0" };

const until = async (condition: () => boolean | Promise<boolean>, what: string) => {
  for (const deadline = Date.now() + 10_000; !(await condition()); await Bun.sleep(25))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
};

describe.skipIf(!hasMosquitto())("zigbee2mqtt", () => {
  let broker: MosquittoHandle;
  let server: ServerHandle;
  /** The fake Zigbee2MQTT: publishes device states and records the commands sent to devices. */
  let z2m: mqtt.MqttClient;
  const commands: Array<{ topic: string; command: unknown }> = [];
  const phone = loopback(() => Response.json({ id: "n1", event: "message" }));
  let connectionId: string;

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
  const runsOf = async (workflowId: string) => (await api("GET", `/api/runs?workflowId=${workflowId}&limit=100`)).data as any[];
  const finishedRuns = async (workflowId: string, count: number) => {
    let runs: any[] = [];
    await until(async () => {
      runs = await runsOf(workflowId);
      return runs.length >= count && runs.every((r) => r.status === "completed" || r.status === "failed");
    }, `${count} finished runs`);
    return Promise.all(runs.map(async (r) => (await api("GET", `/api/runs/${r.id}`)).data));
  };
  /** Uses a template, puts the MQTT connection on its MQTT steps and `change`s it, publishes it, and waits for its subscription. */
  const fromTemplate = async (templateId: string, change: (definition: any) => void = () => undefined) => {
    const used = (await api("POST", `/api/templates/${templateId}/use`, { name: `from ${templateId.slice(-2)}` })).data;
    const definition = used.definition;
    for (let node = definition.trigger; node; node = node.nextAction) if (node.pieceId === "mqtt") node.connectionId = connectionId;
    change(definition);
    await api("PUT", `/api/workflows/${used.id}`, { definition, expectedRev: used.rev });
    await api("POST", `/api/workflows/${used.id}/publish`);
    await until(async () => (await api("GET", `/api/workflows/${used.id}/trigger`)).data.subscription?.open === true, "the subscription");
    return used.id as string;
  };
  const report = (device: string, state: Record<string, unknown>, retain = false) =>
    z2m.publishAsync(`zigbee2mqtt/${device}`, JSON.stringify(state), { qos: 1, retain });

  beforeAll(async () => {
    broker = await startMosquitto();
    server = await startServer({ env });
    z2m = await mqtt.connectAsync(broker.url, { clientId: "fake-zigbee2mqtt" });
    // Friendly names may hold slashes (living_room/lamp), so commands are every zigbee2mqtt/…/set.
    z2m.on("message", (topic, message) => topic.endsWith("/set") && commands.push({ topic, command: JSON.parse(message.toString()) }));
    await z2m.subscribeAsync("zigbee2mqtt/#", { qos: 1 });
    connectionId = (await api("POST", "/api/connections", { pieceId: "mqtt", name: "broker", values: { url: broker.url } })).data.id;
  }, 30_000);
  afterAll(async () => {
    await z2m?.endAsync();
    phone.stop();
    await server?.stop();
    await broker?.stop();
  });

  test("motion sensor → light on for 2 minutes: occupancy true turns the light on with on_time 120; other reports start no run", async () => {
    // A state Zigbee2MQTT retained from before the workflow started is not a new report.
    await report("hallway_motion", { occupancy: true, battery: 97, illuminance: 12, linkquality: 120 }, true);
    const workflowId = await fromTemplate(zigbeeMotionLight.id);
    await report("hallway_motion", { occupancy: false, battery: 97, illuminance: 12, linkquality: 120 });
    await report("kitchen_motion", { occupancy: true, battery: 80, linkquality: 90 });
    await report("hallway_motion", { battery: 96, linkquality: 118 });
    await report("hallway_motion", { occupancy: true, battery: 96, illuminance: 9, linkquality: 118 });
    await until(() => commands.length > 0, "the light's command");
    expect(commands).toEqual([{ topic: "zigbee2mqtt/hallway_light/set", command: { state: "ON", on_time: 120 } }]);
    const [run] = await finishedRuns(workflowId, 1);
    expect(run.status).toBe("completed");
    expect(run.triggerData.body).toMatchObject({
      device: "hallway_motion",
      property: "occupancy",
      value: true,
      topic: "zigbee2mqtt/hallway_motion",
      retain: false,
    });
    expect(run.steps.find((s: any) => s.nodeId === "light_on").outputData).toEqual({
      topic: "zigbee2mqtt/hallway_light/set",
      command: { state: "ON", on_time: 120 },
    });
    // Only the one report with occupancy true made a run.
    expect(await runsOf(workflowId)).toHaveLength(1);
    await api("POST", `/api/workflows/${workflowId}/unpublish`);
  });

  test("door opened while away → phone: contact false pushes only when the store key away is true", async () => {
    const workflowId = await fromTemplate(zigbeeDoorAwayPhone.id, (definition) => {
      definition.variables.ntfyServer = phone.url;
    });
    // At home (away not set): the door opens, the run ends without a push.
    await report("front_door", { contact: false, battery: 100, linkquality: 140 });
    const [home] = await finishedRuns(workflowId, 1);
    expect(home.status).toBe("completed");
    expect(home.steps.find((s: any) => s.nodeId === "away").outputData).toEqual({ key: "away", found: false, value: false });
    expect(phone.requests).toHaveLength(0);
    // Leaving: a workflow sets away, as a phone's or Home Assistant's call to a webhook workflow would.
    const setter = {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "manual",
        config: {},
        nextAction: { name: "set", type: "PIECE", pieceId: "store", actionId: "put", config: { key: "away", value: "{{trigger.body.away}}" } },
      },
    };
    const awayFlow = (await api("POST", "/api/workflows", { name: "away switch", definition: setter })).data;
    expect((await api("POST", `/api/workflows/${awayFlow.id}/run?environment=test&wait=10`, { away: true })).data.status).toBe("completed");
    await report("front_door", { contact: true, battery: 100, linkquality: 140 });
    await report("front_door", { contact: false, battery: 100, linkquality: 139 });
    await until(() => phone.requests.length > 0, "the push");
    const push = JSON.parse(phone.requests[0]!.body);
    expect(push).toEqual({ topic: "my-home", title: "Door opened", message: "front_door opened while you are away", priority: 4 });
    const runs = await finishedRuns(workflowId, 2);
    expect(runs.map((r) => r.status)).toEqual(["completed", "completed"]);
    // The closing report (contact true) made no run.
    expect(await runsOf(workflowId)).toHaveLength(2);
    expect(phone.requests).toHaveLength(1);
  });

  test("the helpers refuse what Zigbee2MQTT would not take, saying what is allowed", async () => {
    const definition = {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "manual",
        config: {},
        nextAction: {
          name: "set",
          type: "PIECE",
          pieceId: "mqtt",
          actionId: "zigbee2mqtt_set",
          connectionId,
          config: { device: "{{trigger.body.device}}", state: "TOGGLE", attributes: "{{trigger.body.attributes}}" },
        },
      },
    };
    const wf = (await api("POST", "/api/workflows", { name: "z2m set", definition })).data;
    const run = async (body: Record<string, unknown>) => (await api("POST", `/api/workflows/${wf.id}/run?environment=test&wait=10`, body)).data;
    const wildcard = await run({ device: "lights/#", attributes: {} });
    expect(wildcard.status).toBe("failed");
    expect(JSON.stringify(wildcard.steps)).toContain('device \\"lights/#\\" must be a device\'s friendly name in Zigbee2MQTT');
    const before = commands.length;
    expect((await run({ device: "living_room/lamp", attributes: { brightness: 200 } })).status).toBe("completed");
    await until(() => commands.length > before, "the command");
    expect(commands.at(-1)).toEqual({ topic: "zigbee2mqtt/living_room/lamp/set", command: { state: "TOGGLE", brightness: 200 } });
  });
});
