/**
 * A loopback stand-in for Home Assistant, which cannot be installed here. It speaks the documented shapes of
 * HA's WebSocket API (developers.home-assistant.io "WebSocket API": auth_required → auth → auth_ok or
 * auth_invalid, then commands with increasing ids answered by `result` frames, subscriptions by `event`
 * frames) and of its REST API ("REST API": Bearer token, /api/states, /api/services, /api/events,
 * /api/template). Its instance holds a few entities and services; `setState` changes an entity as an
 * integration would (a state_changed event and the state triggers it fires), `fireEvent` fires an event,
 * `dropConnections` ends every socket as a restart of HA does. Templates: only {{ states('entity.id') }}
 * is rendered (HA's Jinja is not reimplemented here).
 *   const ha = startHomeAssistant(); ... ha.setState("binary_sensor.door", "on"); ... ha.stop();
 */
import type { ServerWebSocket } from "bun";

export interface HaState {
  entity_id: string;
  state: string;
  attributes: Record<string, unknown>;
  last_changed: string;
  last_updated: string;
  context: { id: string; parent_id: null; user_id: null };
}

interface StateTrigger {
  platform: "state";
  entity_id: string | string[];
  from?: string;
  to?: string;
  for?: { hours?: number; minutes?: number; seconds?: number };
}

interface Connection {
  authenticated: boolean;
  /** Subscription id → what it listens to. */
  subscriptions: Map<number, { kind: "events"; eventType?: string } | { kind: "trigger"; trigger: StateTrigger; timers: Map<string, Timer> }>;
}

type Socket = ServerWebSocket<Connection>;

const HA_VERSION = "2026.11.2";
const context = () => ({ id: crypto.randomUUID().replaceAll("-", "").slice(0, 26).toUpperCase(), parent_id: null, user_id: null });

export function startHomeAssistant(options: { token?: string } = {}) {
  const token = options.token ?? "ha-long-lived-token";
  const now = () => new Date().toISOString().replace("Z", "+00:00");
  const states = new Map<string, HaState>();
  const put = (entity_id: string, state: string, attributes: Record<string, unknown> = {}) =>
    states.set(entity_id, { entity_id, state, attributes, last_changed: now(), last_updated: now(), context: context() });
  put("binary_sensor.door", "off", { friendly_name: "Front door", device_class: "door" });
  put("light.kitchen", "off", { friendly_name: "Kitchen light" });
  put("light.porch", "off", { friendly_name: "Porch light" });
  put("sensor.outside_temperature", "4.5", { friendly_name: "Outside", unit_of_measurement: "°C" });
  const services: Record<string, Record<string, { name: string; description: string; fields: Record<string, unknown> }>> = {
    light: {
      turn_on: { name: "Turn on", description: "Turns on one or more lights.", fields: {} },
      turn_off: { name: "Turn off", description: "Turns off one or more lights.", fields: {} },
      toggle: { name: "Toggle", description: "Toggles one or more lights.", fields: {} },
    },
    notify: { persistent_notification: { name: "Send a persistent notification", description: "", fields: {} } },
    homeassistant: { reload_all: { name: "Reload all", description: "", fields: {} } },
  };
  /** Every call_service (WebSocket) and service POST (REST) the instance received. */
  const calls: Array<{ domain: string; service: string; service_data: Record<string, unknown>; target?: Record<string, unknown> }> = [];
  const fired: Array<{ event_type: string; data: unknown }> = [];
  const sockets = new Set<Socket>();
  /** The Host header of every WebSocket upgrade (a client that connects to a checked address keeps the name here). */
  const upgradeHosts: string[] = [];
  let authFailures = 0;
  let pings = 0;
  /** While set, frames from clients go unanswered: an instance that stalled, or a link that died silently. */
  let silent = false;

  const send = (ws: Socket, frame: unknown): void => void ws.send(JSON.stringify(frame));
  const broadcast = (event: { event_type: string; data: unknown }) => {
    const full = { ...event, origin: "LOCAL", time_fired: now(), context: context() };
    for (const ws of sockets)
      for (const [id, sub] of ws.data.subscriptions)
        if (sub.kind === "events" && (!sub.eventType || sub.eventType === event.event_type)) send(ws, { id, type: "event", event: full });
  };

  const entityMatches = (trigger: StateTrigger, entityId: string) => [trigger.entity_id].flat().includes(entityId);
  const forMs = (f: StateTrigger["for"]) => ((f?.hours ?? 0) * 3600 + (f?.minutes ?? 0) * 60 + (f?.seconds ?? 0)) * 1000;

  /** What HA's state trigger does with a change: from/to compared on the state, `for` timed and cancelled by a later change. */
  const runStateTriggers = (entityId: string, oldState: HaState | null, newState: HaState) => {
    for (const ws of sockets)
      for (const [id, sub] of ws.data.subscriptions) {
        if (sub.kind !== "trigger" || !entityMatches(sub.trigger, entityId)) continue;
        const { from, to } = sub.trigger;
        clearTimeout(sub.timers.get(entityId));
        sub.timers.delete(entityId);
        if ((from !== undefined || to !== undefined) && oldState?.state === newState.state) continue;
        if (from !== undefined && oldState?.state !== from) continue;
        if (to !== undefined && newState.state !== to) continue;
        const fire = () =>
          send(ws, {
            id,
            type: "event",
            event: {
              variables: {
                trigger: {
                  id: "0",
                  idx: "0",
                  alias: null,
                  platform: "state",
                  entity_id: entityId,
                  from_state: oldState,
                  to_state: newState,
                  for: sub.trigger.for ?? null,
                  attribute: null,
                  description: `state of ${entityId}`,
                },
              },
              context: newState.context,
            },
          });
        if (sub.trigger.for) sub.timers.set(entityId, setTimeout(fire, forMs(sub.trigger.for)));
        else fire();
      }
  };

  const setState = (entityId: string, state: string, attributes?: Record<string, unknown>) => {
    const oldState = states.get(entityId) ?? null;
    put(entityId, state, attributes ?? oldState?.attributes ?? {});
    const newState = states.get(entityId)!;
    broadcast({ event_type: "state_changed", data: { entity_id: entityId, old_state: oldState, new_state: newState } });
    runStateTriggers(entityId, oldState, newState);
    return newState;
  };

  const callService = (domain: string, service: string, serviceData: Record<string, unknown>, target?: Record<string, unknown>) => {
    calls.push({ domain, service, service_data: serviceData, ...(target ? { target } : {}) });
    const entities = [target?.entity_id ?? serviceData.entity_id ?? []].flat().map(String);
    const changed: HaState[] = [];
    for (const entityId of entities) {
      const current = states.get(entityId);
      if (!current) continue;
      const next = service === "turn_on" ? "on" : service === "turn_off" ? "off" : service === "toggle" ? (current.state === "on" ? "off" : "on") : undefined;
      if (next && next !== current.state) changed.push(setState(entityId, next));
    }
    broadcast({ event_type: "call_service", data: { domain, service, service_data: serviceData } });
    return changed;
  };

  const command = (ws: Socket, frame: Record<string, any>) => {
    const id = frame.id;
    const ok = (result: unknown = null) => send(ws, { id, type: "result", success: true, result });
    const error = (code: string, message: string) => send(ws, { id, type: "result", success: false, error: { code, message } });
    if (!Number.isInteger(id)) return error("invalid_format", "Message incorrectly formatted: expected int for dictionary value @ data['id']");
    switch (frame.type) {
      case "ping":
        pings++;
        return send(ws, { id, type: "pong" });
      case "subscribe_events":
        ws.data.subscriptions.set(id, { kind: "events", eventType: frame.event_type });
        return ok();
      case "subscribe_trigger": {
        const trigger = frame.trigger as StateTrigger;
        if (trigger?.platform !== "state" || !trigger.entity_id) return error("invalid_format", "Invalid trigger: expected a state trigger with entity_id");
        ws.data.subscriptions.set(id, { kind: "trigger", trigger, timers: new Map() });
        return ok();
      }
      case "unsubscribe_events":
        if (!ws.data.subscriptions.delete(frame.subscription)) return error("not_found", "Subscription not found.");
        return ok();
      case "get_states":
        return ok([...states.values()]);
      case "get_services":
        return ok(services);
      case "call_service": {
        if (!services[frame.domain]?.[frame.service]) return error("not_found", `Service ${frame.domain}.${frame.service} not found.`);
        callService(frame.domain, frame.service, frame.service_data ?? {}, frame.target);
        return ok({ context: context(), response: frame.return_response ? { called: `${frame.domain}.${frame.service}` } : null });
      }
      case "fire_event":
        fired.push({ event_type: frame.event_type, data: frame.event_data ?? {} });
        broadcast({ event_type: frame.event_type, data: frame.event_data ?? {} });
        return ok({ context: context() });
      case "render_template":
        return error("not_supported", "render_template subscriptions are not served by this test instance; use POST /api/template");
      default:
        return error("unknown_command", "Unknown command.");
    }
  };

  const render = (template: string) =>
    template.replace(/\{\{\s*states\(\s*['"]([a-z0-9_]+\.[a-z0-9_]+)['"]\s*\)\s*\}\}/g, (_, entityId) => states.get(entityId)?.state ?? "unknown");

  const server = Bun.serve<Connection, never>({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req, srv) {
      const url = new URL(req.url);
      if (url.pathname === "/api/websocket") {
        upgradeHosts.push(req.headers.get("host") ?? "");
        if (srv.upgrade(req, { data: { authenticated: false, subscriptions: new Map() } })) return undefined;
        return new Response("Expected a WebSocket upgrade", { status: 400 });
      }
      if (req.headers.get("authorization") !== `Bearer ${token}`)
        return new Response("401: Unauthorized", { status: 401, headers: { "content-type": "text/plain" } });
      const body = req.method === "POST" ? await req.text() : "";
      const json = body ? JSON.parse(body) : {};
      if (url.pathname === "/api/" && req.method === "GET") return Response.json({ message: "API running." });
      if (url.pathname === "/api/states" && req.method === "GET") return Response.json([...states.values()]);
      const state = /^\/api\/states\/(.+)$/.exec(url.pathname);
      if (state && req.method === "GET") {
        const found = states.get(decodeURIComponent(state[1]));
        return found ? Response.json(found) : Response.json({ message: "Entity not found." }, { status: 404 });
      }
      if (url.pathname === "/api/services" && req.method === "GET")
        return Response.json(Object.entries(services).map(([domain, list]) => ({ domain, services: list })));
      const service = /^\/api\/services\/([a-z0-9_]+)\/([a-z0-9_]+)$/.exec(url.pathname);
      if (service && req.method === "POST") {
        if (!services[service[1]]?.[service[2]]) return Response.json({ message: `Service ${service[1]}.${service[2]} not found.` }, { status: 400 });
        return Response.json(callService(service[1], service[2], json));
      }
      const event = /^\/api\/events\/(.+)$/.exec(url.pathname);
      if (event && req.method === "POST") {
        const eventType = decodeURIComponent(event[1]);
        fired.push({ event_type: eventType, data: json });
        broadcast({ event_type: eventType, data: json });
        return Response.json({ message: `Event ${eventType} fired.` });
      }
      if (url.pathname === "/api/template" && req.method === "POST") {
        if (typeof json.template !== "string") return Response.json({ message: "Data should be valid JSON." }, { status: 400 });
        return new Response(render(json.template), { headers: { "content-type": "text/plain; charset=utf-8" } });
      }
      return Response.json({ message: "Not found" }, { status: 404 });
    },
    websocket: {
      open(ws) {
        sockets.add(ws);
        send(ws, { type: "auth_required", ha_version: HA_VERSION });
      },
      message(ws, raw) {
        if (silent) return;
        let frame: Record<string, any>;
        try {
          frame = JSON.parse(String(raw));
        } catch {
          return ws.close(1003, "not JSON");
        }
        if (!ws.data.authenticated) {
          if (frame.type === "auth" && frame.access_token === token) {
            ws.data.authenticated = true;
            return send(ws, { type: "auth_ok", ha_version: HA_VERSION });
          }
          authFailures++;
          send(ws, { type: "auth_invalid", message: "Invalid access token or password" });
          return ws.close();
        }
        command(ws, frame);
      },
      close(ws) {
        for (const sub of ws.data.subscriptions.values()) if (sub.kind === "trigger") for (const timer of sub.timers.values()) clearTimeout(timer);
        sockets.delete(ws);
      },
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    token,
    states,
    calls,
    fired,
    upgradeHosts,
    setState,
    fireEvent: (eventType: string, data: Record<string, unknown> = {}) => broadcast({ event_type: eventType, data }),
    /** Authenticated sockets now open, and how many subscriptions they hold. */
    connections: () => [...sockets].filter((ws) => ws.data.authenticated).map((ws) => ws.data.subscriptions.size),
    authFailures: () => authFailures,
    pings: () => pings,
    /** Stops (or resumes) answering anything a client sends, keeping the sockets open. */
    silence: (on: boolean) => {
      silent = on;
    },
    /** Ends every socket, as HA does when it restarts. */
    dropConnections: () => {
      for (const ws of sockets) ws.close(1001, "Home Assistant is stopping");
    },
    stop: () => server.stop(true),
  };
}

export type HomeAssistantFixture = ReturnType<typeof startHomeAssistant>;
