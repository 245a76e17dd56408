/**
 * MQTT (mqtt.js): publish a message, and start a run for every message on a topic filter. The trigger is a
 * long-lived subscription (one per published workflow) with a persistent session — a fixed client id per
 * workflow and clean: false — so messages sent while Weft is down are delivered when it is back; a QoS 1
 * or 2 message is acknowledged only once its run is stored durably, so none acknowledged is lost. The
 * broker's host passes the SSRF policy first (allowedAddress): a home-lab broker needs WEFT_ALLOW_CIDRS.
 */
import type { IClientOptions, IPublishPacket, MqttClient } from "mqtt";
import { action, allowedAddress, Auth, connectionCheck, definePiece, labelled, loadOnce, Property, trigger } from "../../src/pieces-sdk";
import type { GuardedFetch, ResolvedAuth, SubscriptionContext } from "../../src/pieces-sdk/types";

const SCHEMES = new Set(["mqtt:", "mqtts:", "ws:", "wss:"]);
/** mqtt.js, loaded with the first MQTT step or subscription. */
const mqttJs = loadOnce(() => import("mqtt"));

/**
 * Connection options for mqtt.js: the checked address in the URL, the name kept for TLS, and the client id —
 * the connection's prefix (default "weft", for brokers whose ACLs match client ids) and `clientSuffix`.
 */
async function brokerOptions(
  fetch: GuardedFetch,
  auth: ResolvedAuth | undefined,
  clientSuffix: string,
  extra: IClientOptions = {},
): Promise<{ url: string; options: IClientOptions }> {
  if (auth?.kind !== "custom") throw new Error("this step needs an MQTT connection (broker URL and credentials); set its connectionId");
  const v = auth.values;
  const prefix = String(v.client_id ?? "").trim() || "weft";
  if (!/^[\x21-\x7e]{1,64}$/.test(prefix))
    throw new Error(`the client id prefix "${prefix}" must be 1–64 visible ASCII characters without spaces, e.g. weft or homelab-weft`);
  const clientId = `${prefix}-${clientSuffix}`;
  let url: URL;
  try {
    url = new URL(String(v.url ?? "").trim());
  } catch {
    throw new Error(`the broker URL "${v.url}" is not a URL; use e.g. mqtt://192.168.1.10:1883 or mqtts://broker.example.com:8883`);
  }
  if (!SCHEMES.has(url.protocol)) throw new Error(`the broker URL must start with mqtt://, mqtts://, ws:// or wss://; got ${url.protocol}`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const address = await allowedAddress(fetch, host);
  const tls = url.protocol === "mqtts:" || url.protocol === "wss:";
  url.hostname = address.includes(":") ? `[${address}]` : address;
  const options: IClientOptions = {
    clientId,
    username: v.username ? String(v.username) : undefined,
    password: v.password ? String(v.password) : undefined,
    connectTimeout: 10_000,
    reconnectPeriod: 0, // Weft's subscription host reconnects with its own back-off
    ...(tls ? { servername: host, rejectUnauthorized: v.reject_unauthorized !== false, ...(v.ca ? { ca: String(v.ca) } : {}) } : {}),
    ...extra,
  };
  return { url: url.href, options };
}

function payloadOf(config: Record<string, unknown>): string {
  const payload = config.payload;
  if (config.payload_type === "json") return JSON.stringify(payload ?? null);
  if (payload === undefined || payload === null) return "";
  return typeof payload === "string" ? payload : JSON.stringify(payload);
}

/** A message as a run's trigger body: the text, and the parsed JSON when it is JSON. */
function messageOf(topic: string, message: Buffer, packet: IPublishPacket) {
  const text = message.toString("utf8");
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: the text is the payload.
  }
  return { topic, payload: json ?? text, text, qos: packet.qos, retain: packet.retain, messageId: packet.messageId ?? null };
}

type Message = ReturnType<typeof messageOf>;
/** What a trigger makes of a message: its run's trigger body, or null for no run. */
type Accept = (message: Message) => (Message & Record<string, unknown>) | null;

/**
 * How many messages may be on their way to storage at once. Brokers bound the unacknowledged QoS 1 and 2
 * messages of a client themselves (Mosquitto's max_inflight_messages, 20 by default); this bounds QoS 0 and
 * brokers configured without a limit.
 */
const MAX_IN_FLIGHT = 100;

/**
 * A redelivery (dup flag) of a message whose run was stored just before Weft stopped, its acknowledgement
 * lost: the broker sends it again with the same packet id. At most MAX_IN_FLIGHT messages were stored and
 * not yet acknowledged, so only the newest that many stored events can be it. Brokers hand out packet ids
 * in sequence, so within that window an id (with the same topic and payload) names one message.
 */
async function alreadyStored(ctx: SubscriptionContext, packet: IPublishPacket, message: Message): Promise<boolean> {
  if (!packet.dup || packet.qos === 0) return false;
  const recent = await ctx.recentEvents(MAX_IN_FLIGHT);
  return recent.some((event) => event.messageId === message.messageId && event.topic === message.topic && event.text === message.text);
}

/** Passed to mqtt.js's handleMessage callback, it skips the client's own PUBACK: the pipeline sends it (see below). */
const ACK_SENT_SEPARATELY = new Error("acknowledged once stored");

/**
 * Takes messages as fast as they come and stores them concurrently (the run writer commits them together),
 * acknowledging each QoS 1 message once its run is stored, in arrival order as MQTT requires.
 *
 * mqtt.js sends a PUBACK when handleMessage calls back, and reads the next message only then; storing one
 * message at a time would cost one commit and fsync each. So handleMessage calls back at once — with a
 * marker error, which makes mqtt.js skip its PUBACK and go on — and the PUBACK goes out here when the run
 * is stored, through the client's own packet writer (what its handlers use). QoS 2 keeps mqtt.js's
 * one-at-a-time path: its PUBCOMP comes after the PUBREL exchange that mqtt.js tracks itself.
 */
function pipeline(client: MqttClient, ctx: SubscriptionContext, accept: Accept) {
  const send = (client as unknown as { _sendPacket?: (packet: { cmd: "puback"; messageId: number }) => void })._sendPacket?.bind(client);
  let acks = Promise.resolve();
  let inFlight = 0;
  let broken = false;
  const waiting: Array<() => void> = [];
  const fail = (error: Error) => {
    if (broken) return;
    broken = true;
    ctx.log("mqtt message not stored; it will be delivered again", { error: error.message });
    ctx.fail(error);
  };
  const store = (p: IPublishPacket) => {
    const message = accept(messageOf(p.topic, p.payload as Buffer, p));
    // A message the trigger does not want is acknowledged without a run.
    if (!message) return Promise.resolve();
    return alreadyStored(ctx, p, message).then((stored) => (stored ? undefined : ctx.emit(message).then(() => undefined)));
  };
  return (p: IPublishPacket, done: (error?: Error) => void) => {
    if (p.qos === 2 || !send) {
      store(p).then(() => done(), fail);
      return;
    }
    inFlight++;
    const stored = store(p).finally(() => {
      inFlight--;
      waiting.shift()?.();
    });
    if (p.qos === 1) {
      const messageId = p.messageId!;
      // Chained: a message is acknowledged after every earlier one. After a failure nothing more is: the broker redelivers.
      acks = acks
        .then(() => stored)
        .then(() => {
          if (!broken) send({ cmd: "puback", messageId });
        }, fail);
    } else stored.catch(fail);
    const next = () => done(p.qos === 1 ? ACK_SENT_SEPARATELY : undefined);
    if (inFlight < MAX_IN_FLIGHT) next();
    else waiting.push(next);
  };
}

const qosProp = (name: string) =>
  Property.staticDropdown({
    displayName: name,
    default: 1,
    options: [
      { label: "0 — at most once", value: 0 },
      { label: "1 — at least once", value: 1 },
      { label: "2 — exactly once", value: 2 },
    ],
  });

function subscribe(ctx: SubscriptionContext) {
  const topic = String(ctx.config.topic ?? "").trim();
  if (!topic) throw new Error("topic is required (a filter such as home/+/temperature or sensors/#)");
  return subscribeTo(ctx, topic, Number(ctx.config.qos ?? 1) as 0 | 1 | 2, (message) => message);
}

async function subscribeTo(ctx: SubscriptionContext, topic: string, qos: 0 | 1 | 2, accept: Accept) {
  // One client id per workflow: the broker keeps the session (and queues QoS 1/2 messages) while Weft is away.
  const { url, options } = await brokerOptions(ctx.fetch, ctx.auth, ctx.workflowId.replaceAll("-", "").slice(0, 16), { clean: false });
  const client = (await mqttJs()).connect(url, options);
  // A message is acknowledged after its run is stored (pipeline above).
  client.handleMessage = pipeline(client, ctx, accept);
  await new Promise<void>((resolve, reject) => {
    client.once("connect", () => {
      client.subscribe(topic, { qos }, (error, granted) => {
        if (error) return reject(new Error(`subscribing to ${topic} failed: ${error.message}`));
        if (granted?.some((g) => g.qos === 128)) return reject(new Error(`the broker refused the subscription to ${topic}`));
        resolve();
      });
    });
    client.once("error", (error) => reject(new Error(`MQTT: ${error.message}`)));
  }).catch((error) => {
    client.end(true);
    throw error;
  });
  client.on("close", () => ctx.fail(new Error("the connection to the broker closed")));
  client.on("error", (error) => ctx.fail(new Error(`MQTT: ${error.message}`)));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        client.removeAllListeners("close");
        client.removeAllListeners("error");
        client.end(false, {}, () => resolve());
      }),
  };
}

// ---------- Zigbee2MQTT (docs/pieces/mqtt.md, "Zigbee2MQTT") ----------

/** Zigbee2MQTT's base topic (its mqtt.base_topic setting) and a device's friendly name, checked. */
function zigbeeDevice(config: Record<string, unknown>): { base: string; device: string } {
  const base = String(config.base_topic ?? "").trim() || "zigbee2mqtt";
  const device = String(config.device ?? "").trim();
  if (/[+#]/.test(base) || base.endsWith("/"))
    throw new Error(`base topic "${base}" must be a plain topic such as zigbee2mqtt (Zigbee2MQTT's mqtt.base_topic)`);
  if (!device || /[+#]/.test(device) || device.startsWith("/") || device.endsWith("/"))
    throw new Error(`device "${device}" must be a device's friendly name in Zigbee2MQTT, e.g. hallway_motion or living_room/lamp (no + or #)`);
  if (device === "bridge" || device.startsWith("bridge/")) throw new Error("bridge is Zigbee2MQTT's own topic, not a device; give a device's friendly name");
  return { base, device };
}

/** A setting that may be a JSON value typed as text ("true", "21", "ON"): the JSON value, else the text. */
function expectedValue(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const zigbeeProps = {
  base_topic: Property.shortText({ displayName: "Base topic", description: "Zigbee2MQTT's mqtt.base_topic; default zigbee2mqtt" }),
  device: Property.shortText({ displayName: "Device", required: true, description: "the device's friendly name in Zigbee2MQTT, e.g. hallway_motion" }),
};

export default definePiece({
  id: "mqtt",
  name: "MQTT",
  version: "1.0.0",
  icon: "📡",
  description: "Publish to and subscribe on an MQTT broker (Mosquitto, EMQX, Home Assistant's broker…)",
  auth: Auth.custom({
    url: Property.shortText({ displayName: "Broker URL", required: true, description: "mqtt://host:1883, mqtts://host:8883, ws://host:9001 or wss://…" }),
    client_id: Property.shortText({
      displayName: "Client id prefix",
      description:
        "Weft's client ids start with it (default weft): a subscription adds -<workflow>, which the broker keeps its session under, a publish -pub-<random>",
    }),
    username: Property.shortText({ displayName: "Username" }),
    password: Property.secretText({ displayName: "Password" }),
    ca: Property.longText({ displayName: "CA certificate (PEM)", description: "for a broker with a self-signed certificate" }),
    reject_unauthorized: Property.checkbox({ displayName: "Verify the broker's certificate", default: true }),
  }),
  checkConnection: connectionCheck(async ({ auth, fetch }) => {
    const { url, options } = await brokerOptions(fetch, auth, `check-${crypto.randomUUID().slice(0, 8)}`);
    const client = await (await mqttJs()).connectAsync(url, options);
    await client.endAsync();
    return "connected to the broker";
  }),
  actions: [
    action({
      id: "publish",
      name: "Publish a message",
      description: "Publish a text or JSON payload to a topic",
      sideEffects: "external",
      props: {
        topic: Property.shortText({ displayName: "Topic", required: true, description: "e.g. home/livingroom/light/set (no wildcards)" }),
        payload_type: Property.staticDropdown({ displayName: "Payload", default: "text", options: ["text", "json"] }),
        payload: Property.json({ displayName: "Payload value", description: "text, or any JSON value when Payload is json" }),
        qos: qosProp("QoS"),
        retain: Property.checkbox({ displayName: "Retain", default: false }),
      },
      sampleData: { topic: "home/livingroom/light/set", bytes: 2, qos: 1, retain: false },
      async run(ctx) {
        const topic = String(ctx.config.topic ?? "").trim();
        if (!topic || /[+#]/.test(topic)) throw new Error(`topic "${topic}" must be a plain topic without the wildcards + and #`);
        const qos = Number(ctx.config.qos ?? 1) as 0 | 1 | 2;
        const body = payloadOf(ctx.config);
        const { url, options } = await brokerOptions(ctx.fetch, ctx.auth, `pub-${crypto.randomUUID().slice(0, 12)}`);
        const client = await (await mqttJs()).connectAsync(url, options).catch((error: Error) => {
          throw new Error(`could not connect to the broker: ${error.message}`);
        });
        try {
          await client.publishAsync(topic, body, { qos, retain: ctx.config.retain === true });
        } finally {
          await client.endAsync();
        }
        return { topic, bytes: Buffer.byteLength(body), qos, retain: ctx.config.retain === true };
      },
    }),
    action({
      id: "zigbee2mqtt_set",
      name: "Zigbee2MQTT: set a device",
      description: "Publish a JSON command to zigbee2mqtt/<device>/set: a state (ON, OFF, TOGGLE) and attributes such as brightness or on_time",
      sideEffects: "external",
      props: {
        ...zigbeeProps,
        state: Property.staticDropdown({
          displayName: "State",
          default: "ON",
          options: labelled({ ON: "ON", OFF: "OFF", TOGGLE: "TOGGLE", "": "(none: attributes only)" }),
        }),
        attributes: Property.json({
          displayName: "Attributes",
          description: 'more of the command, e.g. {"brightness": 200} or {"on_time": 120} (on for 120 s, then off)',
        }),
      },
      sampleData: { topic: "zigbee2mqtt/hallway_light/set", command: { state: "ON", on_time: 120 } },
      async run(ctx) {
        const { base, device } = zigbeeDevice(ctx.config);
        let attributes = expectedValue(ctx.config.attributes ?? {});
        if (attributes === "" || attributes === null) attributes = {};
        if (typeof attributes !== "object" || Array.isArray(attributes))
          throw new Error('attributes must be a JSON object, e.g. {"brightness": 200} or {"on_time": 120}');
        const state = String(ctx.config.state ?? "").trim();
        const command = { ...(state ? { state } : {}), ...(attributes as Record<string, unknown>) };
        if (!Object.keys(command).length) throw new Error("nothing to send: choose a state or give attributes");
        const topic = `${base}/${device}/set`;
        const body = JSON.stringify(command);
        const { url, options } = await brokerOptions(ctx.fetch, ctx.auth, `pub-${crypto.randomUUID().slice(0, 12)}`);
        const client = await (await mqttJs()).connectAsync(url, options).catch((error: Error) => {
          throw new Error(`could not connect to the broker: ${error.message}`);
        });
        try {
          await client.publishAsync(topic, body, { qos: 1 });
        } finally {
          await client.endAsync();
        }
        return { topic, command };
      },
    }),
  ],
  triggers: [
    trigger({
      id: "message_received",
      name: "Message received",
      description: "A run for every message on a topic filter (wildcards + and #); QoS 1 and 2 messages are acknowledged once their run is stored",
      type: "subscription",
      props: {
        topic: Property.shortText({ displayName: "Topic filter", required: true, description: "e.g. home/+/temperature or zigbee2mqtt/#" }),
        qos: qosProp("QoS"),
      },
      sampleData: { topic: "home/kitchen/temperature", payload: { value: 21.5 }, text: '{"value":21.5}', qos: 1, retain: false },
      subscribe,
    }),
    trigger({
      id: "zigbee2mqtt_device",
      name: "Zigbee2MQTT: device reported",
      description:
        "A run when a Zigbee2MQTT device publishes its state on zigbee2mqtt/<device>, optionally only when a property has a value (occupancy true, contact false)",
      type: "subscription",
      props: {
        ...zigbeeProps,
        property: Property.shortText({ displayName: "Property", description: "only messages carrying it, e.g. occupancy, contact, action" }),
        equals: Property.json({ displayName: "Equal to", description: 'only when the property has this value, e.g. true, false, "single"' }),
      },
      sampleData: {
        device: "hallway_motion",
        property: "occupancy",
        value: true,
        topic: "zigbee2mqtt/hallway_motion",
        payload: { occupancy: true, battery: 97, illuminance: 12, linkquality: 120 },
        text: '{"occupancy":true,"battery":97,"illuminance":12,"linkquality":120}',
        qos: 1,
        retain: false,
      },
      subscribe: (ctx) => {
        const { base, device } = zigbeeDevice(ctx.config);
        const property = String(ctx.config.property ?? "").trim();
        const wanted = ctx.config.equals === undefined || ctx.config.equals === "" ? undefined : expectedValue(ctx.config.equals);
        if (wanted !== undefined && !property) throw new Error("Equal to needs a property, e.g. occupancy");
        return subscribeTo(ctx, `${base}/${device}`, 1, (message) => {
          // A retained message is a state the broker kept from before, not a new report.
          if (message.retain) return null;
          const payload = message.payload;
          if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return null;
          const value = property ? (payload as Record<string, unknown>)[property] : undefined;
          if (property && value === undefined) return null;
          if (wanted !== undefined && !sameValue(value, wanted)) return null;
          return { ...message, device, property: property || null, value: value ?? null };
        });
      },
    }),
  ],
});
