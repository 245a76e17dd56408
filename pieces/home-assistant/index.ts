/**
 * Home Assistant: call a service, read a state, fire an event, render a template, and start a run when an
 * entity's state changes or an event is fired. A connection is the instance's base URL and a long-lived
 * access token; a LAN instance needs its range allowed (WEFT_ALLOW_CIDRS), as every piece's does.
 * The triggers are long-lived WebSocket subscriptions (one per published workflow, as the MQTT trigger);
 * when the connection drops, the subscription fails and Weft opens it again with back-off, which
 * authenticates and subscribes anew. docs/pieces/home-assistant.md says which HA messages each step uses.
 */
import { action, Auth, connectionCheck, definePiece, jsonObjectOf, Property, trigger } from "../../src/pieces-sdk";
import type { DynamicOptionsContext, SubscriptionContext } from "../../src/pieces-sdk/types";
import type { Connection } from "home-assistant-js-websocket";
import { connect, haFailure, type Instance, instanceOf, rest, watch, withConnection } from "./client";

/** How often a subscription's socket is pinged; a pong later than this counts as a lost connection. */
const PING_EVERY_MS = 30_000;
const NAME = /^[a-z0-9_]+$/;
const ENTITY_ID = /^[a-z0-9_]+\.[a-z0-9_]+$/;

function nameOf(value: unknown, field: string, example: string): string {
  const text = String(value ?? "").trim();
  if (!NAME.test(text)) throw new Error(`${field} "${text}" is not a Home Assistant ${field}; use lowercase letters, digits and _, e.g. ${example}`);
  return text;
}

function entityOf(value: unknown): string {
  const text = String(value ?? "").trim();
  if (!ENTITY_ID.test(text)) throw new Error(`entity id "${text}" is not an entity id; use domain.object_id, e.g. light.kitchen`);
  return text;
}

/** Entity ids or patterns from a list or a comma/space separated text. */
function entityList(value: unknown): string[] {
  const items = Array.isArray(value) ? value.map(String) : String(value ?? "").split(/[\s,]+/);
  return items.map((s) => s.trim()).filter(Boolean);
}

/** What an object setting (service data, a target, event data) looks like, in its refusal. */
const HA_OBJECT_EXAMPLE = '{"brightness_pct": 50}';

/** A "for" duration: seconds, or H:MM:SS / MM:SS; as HA's {hours, minutes, seconds}. */
function durationOf(value: unknown): { hours: number; minutes: number; seconds: number } | undefined {
  const text = String(value ?? "").trim();
  if (!text) return undefined;
  let total: number;
  const clock = /^(?:(\d+):)?(\d{1,2}):(\d{2})$/.exec(text);
  if (/^\d+$/.test(text)) total = Number(text);
  else if (clock) total = Number(clock[1] ?? 0) * 3600 + Number(clock[2]) * 60 + Number(clock[3]);
  else throw new Error(`for "${text}" is not a duration; use seconds (90) or H:MM:SS (0:01:30)`);
  return { hours: Math.floor(total / 3600), minutes: Math.floor((total % 3600) / 60), seconds: total % 60 };
}

// ---------- dropdowns, loaded from the instance ----------

interface ServiceDomain {
  domain: string;
  /** Older instances list names; newer ones an object keyed by name. */
  services: string[] | Record<string, { name?: string }>;
}
interface EntityState {
  entity_id: string;
  state: string;
  attributes?: { friendly_name?: string };
}

async function servicesOf(ctx: DynamicOptionsContext): Promise<ServiceDomain[]> {
  const list = await rest(ctx.fetch, instanceOf(ctx.auth), "GET", "/api/services", { signal: ctx.signal });
  return Array.isArray(list) ? (list as ServiceDomain[]) : [];
}

const domainProp = () =>
  Property.dropdown({
    displayName: "Domain",
    description: "the integration whose service to call, e.g. light",
    required: true,
    refreshers: ["auth"],
    options: async (ctx) => {
      const domains = (await servicesOf(ctx)).map((d) => d.domain).sort();
      return domains.length ? { options: domains.map((d) => ({ label: d, value: d })) } : { options: [], placeholder: "The instance lists no services" };
    },
  });

const serviceProp = () =>
  Property.dropdown({
    displayName: "Service",
    description: "e.g. turn_on",
    required: true,
    refreshers: ["auth", "domain"],
    options: async (ctx) => {
      const domain = String(ctx.config.domain ?? "");
      if (!domain) return { options: [], placeholder: "Choose a domain first" };
      const found = (await servicesOf(ctx)).find((d) => d.domain === domain);
      const services = Array.isArray(found?.services)
        ? found.services.map((id) => [id, id])
        : Object.entries(found?.services ?? {}).map(([id, s]) => [id, s?.name || id]);
      services.sort((a, b) => a[0].localeCompare(b[0]));
      return services.length
        ? { options: services.map(([id, name]) => ({ label: name === id ? id : `${name} (${id})`, value: id })) }
        : { options: [], placeholder: `${domain} has no services` };
    },
  });

/** Entities of the instance; for a step with a domain, those of that domain. */
const entityProp = (options: { displayName: string; description: string; required: boolean }) =>
  Property.dropdown({
    ...options,
    refreshers: ["auth", "domain"],
    options: async (ctx) => {
      const states = (await rest(ctx.fetch, instanceOf(ctx.auth), "GET", "/api/states", { signal: ctx.signal })) as EntityState[] | null;
      const domain = String(ctx.config.domain ?? "");
      const entities = (Array.isArray(states) ? states : [])
        .filter((s) => !domain || s.entity_id.startsWith(`${domain}.`))
        .sort((a, b) => a.entity_id.localeCompare(b.entity_id));
      return entities.length
        ? {
            options: entities.map((s) => ({
              label: s.attributes?.friendly_name ? `${s.attributes.friendly_name} (${s.entity_id})` : s.entity_id,
              value: s.entity_id,
            })),
          }
        : { options: [], placeholder: domain ? `The instance has no ${domain} entities` : "The instance has no entities" };
    },
  });

// ---------- triggers ----------

interface StateObject {
  entity_id: string;
  state: string;
  attributes?: Record<string, unknown>;
  last_changed?: string;
}

/** A state change as a run's trigger body, the same whichever subscription saw it. */
const stateChange = (entityId: string, from: StateObject | null, to: StateObject | null, extra: Record<string, unknown> = {}) => ({
  entity_id: entityId,
  from: from?.state ?? null,
  to: to?.state ?? null,
  from_state: from,
  to_state: to,
  ...extra,
});

/** A glob over entity ids: * is any run of characters, ? one character. */
const globOf = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replaceAll("*", ".*")
      .replaceAll("?", ".")}$`,
  );

/** Emits each event, in order, failing the subscription when a run cannot be stored. */
function emitter(ctx: SubscriptionContext) {
  let chain = Promise.resolve();
  return (payload: Record<string, unknown>) => {
    chain = chain.then(() => ctx.emit(payload).then(() => undefined)).catch((error: Error) => ctx.fail(error));
  };
}

/**
 * Opens a connection and subscribes; its loss fails the subscription, and Weft opens it again with its
 * back-off, subscribing anew (the library's own reconnect is cut short by the close that follows).
 */
async function liveConnection(ctx: SubscriptionContext, instance: Instance, subscribe: (connection: Connection) => Promise<unknown>) {
  const connection = await connect(ctx.fetch, instance);
  try {
    await subscribe(connection);
  } catch (error) {
    connection.close();
    throw haFailure(error);
  }
  const unwatch = watch(connection, PING_EVERY_MS, (reason) => ctx.fail(new Error(reason)));
  return {
    close: () => {
      unwatch();
      connection.close();
    },
  };
}

async function subscribeStateChanged(ctx: SubscriptionContext) {
  const instance = instanceOf(ctx.auth);
  const entities = entityList(ctx.config.entity_id);
  if (!entities.length) throw new Error("entity_id is required: one or more entity ids (light.kitchen, sensor.door) or a pattern such as light.*");
  const from = ctx.config.from === undefined || ctx.config.from === "" ? undefined : String(ctx.config.from);
  const to = ctx.config.to === undefined || ctx.config.to === "" ? undefined : String(ctx.config.to);
  const duration = durationOf(ctx.config.for);
  const emit = emitter(ctx);
  const patterns = entities.some((e) => /[*?]/.test(e));
  if (!patterns) {
    for (const e of entities) entityOf(e);
    // Home Assistant evaluates from, to and for itself (a state trigger, as in an automation).
    const stateTrigger = { platform: "state", entity_id: entities, ...(from ? { from } : {}), ...(to ? { to } : {}), ...(duration ? { for: duration } : {}) };
    return liveConnection(ctx, instance, (connection) =>
      connection.subscribeMessage<Record<string, unknown>>(
        (event) => {
          const t = ((event.variables as Record<string, unknown> | undefined)?.trigger ?? {}) as Record<string, unknown>;
          const extra = duration ? { for: duration } : {};
          emit(stateChange(String(t.entity_id), (t.from_state as StateObject) ?? null, (t.to_state as StateObject) ?? null, extra));
        },
        { type: "subscribe_trigger", trigger: stateTrigger },
        { resubscribe: false },
      ),
    );
  }
  if (duration)
    throw new Error(`for needs explicit entity ids (Home Assistant times it); a pattern such as ${entities.find((e) => /[*?]/.test(e))} cannot have one`);
  // A pattern: every state_changed event, matched here as Home Assistant's state trigger would.
  const globs = entities.map(globOf);
  return liveConnection(ctx, instance, (connection) =>
    connection.subscribeEvents<Record<string, unknown>>((event) => {
      const data = (event.data ?? {}) as { entity_id?: string; old_state?: StateObject | null; new_state?: StateObject | null };
      const entityId = String(data.entity_id ?? "");
      if (!globs.some((g) => g.test(entityId))) return;
      const before = data.old_state?.state;
      const after = data.new_state?.state;
      // With from or to, an attribute-only change does not count (as in HA's state trigger).
      if ((from !== undefined || to !== undefined) && before === after) return;
      if (from !== undefined && before !== from) return;
      if (to !== undefined && after !== to) return;
      emit(stateChange(entityId, data.old_state ?? null, data.new_state ?? null));
    }, "state_changed"),
  );
}

async function subscribeEventFired(ctx: SubscriptionContext) {
  const instance = instanceOf(ctx.auth);
  const eventType = String(ctx.config.event_type ?? "").trim();
  if (!eventType) throw new Error("event_type is required, e.g. zha_event, call_service or your own event's name");
  const emit = emitter(ctx);
  return liveConnection(ctx, instance, (connection) =>
    connection.subscribeEvents<Record<string, unknown>>(
      (event) =>
        emit({
          event_type: event.event_type,
          data: event.data ?? {},
          origin: event.origin ?? null,
          time_fired: event.time_fired ?? null,
          context: event.context ?? null,
        }),
      eventType,
    ),
  );
}

const connectionProps = {
  url: Property.shortText({ displayName: "Base URL", required: true, description: "e.g. http://192.168.1.20:8123 or https://ha.example.com" }),
  token: Property.secretText({
    displayName: "Long-lived access token",
    required: true,
    description: "Home Assistant → your profile → Security → Long-lived access tokens",
  }),
};

export default definePiece({
  id: "home-assistant",
  name: "Home Assistant",
  version: "1.0.0",
  icon: "🏠",
  description: "Call services, read states, fire events and render templates in Home Assistant; start runs on state changes and events",
  auth: Auth.custom(connectionProps),
  checkConnection: connectionCheck(async ({ auth, fetch }) => {
    const instance = instanceOf(auth);
    await rest(fetch, instance, "GET", "/api/");
    const version = await withConnection(fetch, instance, async (connection) => connection.haVersion);
    return `connected to Home Assistant${version ? ` ${version}` : ""} (REST and WebSocket API)`;
  }),
  actions: [
    action({
      id: "call_service",
      name: "Call a service",
      description: "Call a service (light.turn_on, notify.mobile_app_…, script.…) on entities, devices or areas",
      sideEffects: "external",
      props: {
        domain: domainProp(),
        service: serviceProp(),
        entity_id: entityProp({ displayName: "Entity", description: "the target entity; more targets (area_id, device_id) go in Target", required: false }),
        target: Property.json({ displayName: "Target", description: 'more targets, e.g. {"area_id": "kitchen"} or {"entity_id": ["light.a", "light.b"]}' }),
        data: Property.json({ displayName: "Service data", description: 'e.g. {"brightness_pct": 50}' }),
        return_response: Property.checkbox({
          displayName: "Return the response",
          description: "for services that answer (weather.get_forecasts…)",
          default: false,
        }),
      },
      sampleData: {
        domain: "light",
        service: "turn_on",
        target: { entity_id: "light.kitchen" },
        context: { id: "01JDX0000000000000000000", parent_id: null, user_id: null },
        response: null,
      },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const domain = nameOf(c.domain, "domain", "light");
        const service = nameOf(c.service, "service", "turn_on");
        const target = jsonObjectOf(c.target, "target", HA_OBJECT_EXAMPLE);
        const entities = entityList(c.entity_id);
        if (entities.length) {
          entities.forEach(entityOf);
          const more = target.entity_id === undefined ? [] : entityList(target.entity_id);
          target.entity_id = [...entities, ...more].length === 1 ? entities[0] : [...entities, ...more];
        }
        const returnResponse = c.return_response === true;
        const serviceData = jsonObjectOf(c.data, "data", HA_OBJECT_EXAMPLE);
        const result = (await withConnection(ctx.fetch, instanceOf(ctx.auth), (connection) =>
          connection.sendMessagePromise({
            type: "call_service",
            domain,
            service,
            service_data: serviceData,
            ...(Object.keys(target).length ? { target } : {}),
            ...(returnResponse ? { return_response: true } : {}),
          }),
        )) as { context?: unknown; response?: unknown } | null;
        return { domain, service, target, context: result?.context ?? null, response: result?.response ?? null };
      },
    }),
    action({
      id: "get_state",
      name: "Get a state",
      description: "Read an entity's state and attributes",
      sideEffects: "read",
      props: { entity_id: entityProp({ displayName: "Entity", description: "e.g. sensor.living_room_temperature", required: true }) },
      sampleData: {
        entity_id: "sensor.living_room_temperature",
        state: "21.5",
        attributes: { unit_of_measurement: "°C", friendly_name: "Living room" },
        last_changed: "2026-11-25T08:00:00+00:00",
      },
      async run(ctx) {
        const entityId = entityOf(ctx.config.entity_id);
        return rest(ctx.fetch, instanceOf(ctx.auth), "GET", `/api/states/${entityId}`, {
          signal: ctx.signal,
          notFound: `Home Assistant has no entity ${entityId}`,
        });
      },
    }),
    action({
      id: "fire_event",
      name: "Fire an event",
      description: "Fire an event on Home Assistant's event bus (automations can trigger on it)",
      sideEffects: "external",
      props: {
        event_type: Property.shortText({ displayName: "Event type", required: true, description: "e.g. weft_backup_done" }),
        data: Property.json({ displayName: "Event data", description: 'e.g. {"size_gb": 12}' }),
      },
      sampleData: { event_type: "weft_backup_done", message: "Event weft_backup_done fired." },
      async run(ctx) {
        const eventType = String(ctx.config.event_type ?? "").trim();
        if (!/^[\w.:-]{1,64}$/.test(eventType)) throw new Error(`event type "${eventType}" must be 1–64 letters, digits, _ . : or -, e.g. weft_backup_done`);
        const answer = (await rest(ctx.fetch, instanceOf(ctx.auth), "POST", `/api/events/${eventType}`, {
          body: jsonObjectOf(ctx.config.data, "data", HA_OBJECT_EXAMPLE),
          signal: ctx.signal,
        })) as { message?: string } | null;
        return { event_type: eventType, message: answer?.message ?? null };
      },
    }),
    action({
      id: "render_template",
      name: "Render a template",
      description: "Render a Home Assistant (Jinja) template, e.g. {{ states('sensor.outside') }}",
      sideEffects: "read",
      props: {
        template: Property.longText({
          displayName: "Template",
          required: true,
          description: "Home Assistant's template; Weft evaluates its own {{ }} first, so put HA's inside a Weft string: {{ \"{{ states('sun.sun') }}\" }}",
        }),
      },
      sampleData: { result: "It is 4.5 °C outside" },
      async run(ctx) {
        const template = String(ctx.config.template ?? "");
        if (!template.trim()) throw new Error("template is empty; give a Home Assistant template such as {{ states('sun.sun') }}");
        const answer = await rest(ctx.fetch, instanceOf(ctx.auth), "POST", "/api/template", { body: { template }, signal: ctx.signal });
        return { result: typeof answer === "string" ? answer : JSON.stringify(answer) };
      },
    }),
  ],
  triggers: [
    trigger({
      id: "state_changed",
      name: "State changed",
      description: "A run when an entity's state changes: entity ids (Home Assistant evaluates from, to and for) or a pattern such as light.*",
      type: "subscription",
      props: {
        entity_id: Property.shortText({
          displayName: "Entities",
          required: true,
          description: "entity ids separated by commas (binary_sensor.door, light.kitchen) or a pattern (light.*)",
        }),
        from: Property.shortText({ displayName: "From state", description: "only changes from this state, e.g. off" }),
        to: Property.shortText({ displayName: "To state", description: "only changes to this state, e.g. on" }),
        for: Property.shortText({ displayName: "For", description: "the new state must hold this long: seconds or H:MM:SS (entity ids only)" }),
      },
      sampleData: stateChange("binary_sensor.door", { entity_id: "binary_sensor.door", state: "off" }, { entity_id: "binary_sensor.door", state: "on" }),
      subscribe: subscribeStateChanged,
    }),
    trigger({
      id: "event_fired",
      name: "Event fired",
      description: "A run for every event of a type on Home Assistant's event bus",
      type: "subscription",
      props: { event_type: Property.shortText({ displayName: "Event type", required: true, description: "e.g. zha_event, mobile_app_notification_action" }) },
      sampleData: {
        event_type: "zha_event",
        data: { command: "on" },
        origin: "LOCAL",
        time_fired: "2026-11-25T08:00:00+00:00",
        context: { id: "01JDX0000000000000000000" },
      },
      subscribe: subscribeEventFired,
    }),
  ],
});
