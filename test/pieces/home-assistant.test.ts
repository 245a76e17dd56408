/**
 * The home-assistant piece against a loopback server that speaks Home Assistant's documented WebSocket and
 * REST messages (test/support/home-assistant.ts; HA itself cannot be installed here): actions, the
 * dropdowns loaded from the instance, both triggers (HA's state trigger for entity ids, state_changed
 * events matched here for a pattern), a refused token, a dropped connection, and the SSRF guard in front
 * of both the REST calls and the socket.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createGuardedFetch } from "../../src/net/guarded-fetch";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import type { DynamicOptionsContext, ResolvedAuth, SubscriptionContext } from "../../src/pieces-sdk/types";
import { connect, watch } from "../../pieces/home-assistant/client";
import { type HomeAssistantFixture, startHomeAssistant } from "../support/home-assistant";
import { fakeContext } from "./fake-context";

const registry = builtinRegistry();
const piece = registry.get("home-assistant")!;
const allowed = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"] });
let ha: HomeAssistantFixture;
let auth: ResolvedAuth;
beforeAll(() => {
  ha = startHomeAssistant();
  auth = { kind: "custom", values: { url: ha.url, token: ha.token } };
});
afterAll(() => ha.stop());

const run = async (actionId: string, config: Record<string, unknown>, options: { fetch?: typeof allowed; auth?: ResolvedAuth } = {}) => {
  const ctx = fakeContext(config, { auth: options.auth ?? auth });
  ctx.fetch = options.fetch ?? allowed;
  return (await piece.actions[actionId]!.run(ctx)) as any;
};

const optionsOf = async (actionId: string, prop: string, config: Record<string, unknown>) => {
  const ctx: DynamicOptionsContext = { config, auth, fetch: allowed, signal: new AbortController().signal };
  return piece.actions[actionId]!.props[prop]!.options!(ctx);
};

/** Opens a trigger's subscription as Weft's subscription host would; `events` are what it emitted, `failures` why it broke. */
async function subscribe(triggerId: string, config: Record<string, unknown>, options: { auth?: ResolvedAuth; fetch?: typeof allowed } = {}) {
  const events: Record<string, unknown>[] = [];
  const failures: Error[] = [];
  const ctx: SubscriptionContext = {
    config,
    auth: options.auth ?? auth,
    fetch: options.fetch ?? allowed,
    workflowId: crypto.randomUUID(),
    emit: async (payload) => {
      events.push(payload);
      return crypto.randomUUID();
    },
    lastEvent: async () => null,
    recentEvents: async () => [],
    fail: (error) => void failures.push(error),
    log: () => undefined,
  };
  const subscription = await piece.triggers[triggerId]!.subscribe!(ctx);
  return { events, failures, close: () => subscription.close() };
}

const until = async (condition: () => boolean, what: string) => {
  for (const deadline = Date.now() + 5_000; !condition(); await Bun.sleep(10)) if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
};

describe("home-assistant", () => {
  test("call_service sends domain, service, service data and target over the WebSocket API; an unknown service reads as HA's error", async () => {
    const out = await run("call_service", { domain: "light", service: "turn_on", entity_id: "light.kitchen", data: { brightness_pct: 40 } });
    expect(out).toMatchObject({ domain: "light", service: "turn_on", target: { entity_id: "light.kitchen" }, response: null });
    expect(out.context.id).toBeString();
    expect(ha.calls.at(-1)).toEqual({ domain: "light", service: "turn_on", service_data: { brightness_pct: 40 }, target: { entity_id: "light.kitchen" } });
    expect(ha.states.get("light.kitchen")!.state).toBe("on");
    // By name: the socket goes to the address the guard checked (127.0.0.1), the name stays in the Host header.
    const byName: ResolvedAuth = { kind: "custom", values: { url: ha.url.replace("127.0.0.1", "localhost"), token: ha.token } };
    await run("call_service", { domain: "light", service: "turn_on", entity_id: "light.porch" }, { auth: byName });
    expect(ha.upgradeHosts.at(-1)).toBe(new URL(byName.values.url as string).host);
    const both = await run("call_service", { domain: "light", service: "turn_off", entity_id: "light.kitchen", target: { entity_id: "light.porch" } });
    expect(both.target).toEqual({ entity_id: ["light.kitchen", "light.porch"] });
    const answered = await run("call_service", { domain: "light", service: "toggle", target: '{"entity_id": "light.porch"}', return_response: true });
    expect(answered.response).toEqual({ called: "light.toggle" });
    await expect(run("call_service", { domain: "light", service: "explode", entity_id: "light.kitchen" })).rejects.toThrow(
      "Home Assistant: Service light.explode not found. (not_found)",
    );
    await expect(run("call_service", { domain: "Light!", service: "turn_on" })).rejects.toThrow('domain "Light!" is not a Home Assistant domain');
    await expect(run("call_service", { domain: "light", service: "turn_on", data: [1] })).rejects.toThrow("data must be a JSON object");
  });

  test("get_state, fire_event and render_template use the REST API with the token; a missing entity says so", async () => {
    const state = await run("get_state", { entity_id: "sensor.outside_temperature" });
    expect(state).toMatchObject({ entity_id: "sensor.outside_temperature", state: "4.5", attributes: { unit_of_measurement: "°C" } });
    await expect(run("get_state", { entity_id: "sensor.nowhere" })).rejects.toThrow("Home Assistant has no entity sensor.nowhere");
    await expect(run("get_state", { entity_id: "../config" })).rejects.toThrow('entity id "../config" is not an entity id');
    expect(await run("fire_event", { event_type: "weft_backup_done", data: { size_gb: 12 } })).toEqual({
      event_type: "weft_backup_done",
      message: "Event weft_backup_done fired.",
    });
    expect(ha.fired.at(-1)).toEqual({ event_type: "weft_backup_done", data: { size_gb: 12 } });
    expect(await run("render_template", { template: "It is {{ states('sensor.outside_temperature') }} °C outside" })).toEqual({
      result: "It is 4.5 °C outside",
    });
  });

  test("a refused token: REST and WebSocket steps and the connection check say how to make one", async () => {
    const wrong: ResolvedAuth = { kind: "custom", values: { url: ha.url, token: "wrong" } };
    await expect(run("get_state", { entity_id: "light.kitchen" }, { auth: wrong })).rejects.toThrow("Home Assistant refused the access token");
    const failuresBefore = ha.authFailures();
    await expect(run("call_service", { domain: "light", service: "turn_on" }, { auth: wrong })).rejects.toThrow(
      "Home Assistant refused the access token; create a long-lived access token in Home Assistant (your profile → Security) and put it in the connection (it said: Invalid access token or password)",
    );
    expect(ha.authFailures()).toBe(failuresBefore + 1);
    await expect(subscribe("event_fired", { event_type: "zha_event" }, { auth: wrong })).rejects.toThrow("refused the access token");
    expect(await piece.checkConnection!({ auth: wrong, fetch: allowed, signal: new AbortController().signal })).toMatchObject({ ok: false });
    expect(await piece.checkConnection!({ auth, fetch: allowed, signal: new AbortController().signal })).toEqual({
      ok: true,
      message: "connected to Home Assistant 2026.11.2 (REST and WebSocket API)",
    });
  });

  test("a LAN address needs an allowed range: REST, WebSocket and the connection check are refused with the way to allow it", async () => {
    const guarded = createGuardedFetch();
    await expect(run("get_state", { entity_id: "light.kitchen" }, { fetch: guarded })).rejects.toThrow(/127\.0\.0\.1.*WEFT_ALLOW_CIDRS/);
    await expect(run("call_service", { domain: "light", service: "turn_on" }, { fetch: guarded })).rejects.toThrow(/127\.0\.0\.1.*WEFT_ALLOW_CIDRS/);
    await expect(subscribe("state_changed", { entity_id: "light.kitchen" }, { fetch: guarded })).rejects.toThrow(/WEFT_ALLOW_CIDRS/);
    const check = await piece.checkConnection!({ auth, fetch: guarded, signal: new AbortController().signal });
    expect(check.ok).toBe(false);
    expect(check.message).toContain("WEFT_ALLOW_CIDRS");
    const lan: ResolvedAuth = { kind: "custom", values: { url: "http://192.168.1.20:8123", token: "t" } };
    await expect(run("call_service", { domain: "light", service: "turn_on" }, { fetch: guarded, auth: lan })).rejects.toThrow(
      /refused to connect to 192\.168\.1\.20, a private address.*WEFT_ALLOW_CIDRS=/,
    );
  });

  test("dropdowns list the instance's domains, the chosen domain's services, and its entities", async () => {
    const domains = await optionsOf("call_service", "domain", {});
    expect(domains.options.map((o) => o.value)).toEqual(["homeassistant", "light", "notify"]);
    const services = await optionsOf("call_service", "service", { domain: "light" });
    expect(services.options).toEqual([
      { label: "Toggle (toggle)", value: "toggle" },
      { label: "Turn off (turn_off)", value: "turn_off" },
      { label: "Turn on (turn_on)", value: "turn_on" },
    ]);
    expect((await optionsOf("call_service", "service", {})).placeholder).toBe("Choose a domain first");
    const lights = await optionsOf("call_service", "entity_id", { domain: "light" });
    expect(lights.options).toEqual([
      { label: "Kitchen light (light.kitchen)", value: "light.kitchen" },
      { label: "Porch light (light.porch)", value: "light.porch" },
    ]);
    expect((await optionsOf("get_state", "entity_id", {})).options.map((o) => o.value)).toContain("binary_sensor.door");
  });

  test("state_changed with entity ids subscribes HA's state trigger, which applies from and to", async () => {
    ha.setState("binary_sensor.door", "off");
    const sub = await subscribe("state_changed", { entity_id: "binary_sensor.door", from: "off", to: "on" });
    ha.setState("binary_sensor.door", "on");
    ha.setState("binary_sensor.door", "off");
    ha.setState("binary_sensor.door", "on");
    await until(() => sub.events.length === 2, "two door openings");
    expect(sub.events[0]).toMatchObject({ entity_id: "binary_sensor.door", from: "off", to: "on", to_state: { attributes: { friendly_name: "Front door" } } });
    ha.setState("light.kitchen", "off");
    ha.setState("light.kitchen", "on");
    await Bun.sleep(50);
    expect(sub.events).toHaveLength(2);
    await sub.close();

    // Several ids, no from/to: every change of either, as HA's state trigger reports it.
    const both = await subscribe("state_changed", { entity_id: "binary_sensor.door, light.kitchen" });
    ha.setState("light.kitchen", "off");
    ha.setState("binary_sensor.door", "off");
    ha.setState("light.porch", "on");
    await until(() => both.events.length === 2, "a change of each");
    expect(both.events.map((e) => [e.entity_id, e.from, e.to])).toEqual([
      ["light.kitchen", "on", "off"],
      ["binary_sensor.door", "on", "off"],
    ]);
    await both.close();
    await expect(subscribe("state_changed", { entity_id: "Light Kitchen" })).rejects.toThrow('entity id "Light" is not an entity id');
  });

  test("state_changed with for: HA fires once the state held that long, not when it changed back earlier", async () => {
    ha.setState("light.porch", "off");
    const sub = await subscribe("state_changed", { entity_id: "light.porch", to: "on", for: "0:00:01" });
    ha.setState("light.porch", "on");
    ha.setState("light.porch", "off");
    ha.setState("light.porch", "on");
    await until(() => sub.events.length === 1, "the porch light on for a second");
    expect(sub.events[0]).toMatchObject({ entity_id: "light.porch", to: "on", for: { hours: 0, minutes: 0, seconds: 1 } });
    await sub.close();
    await expect(subscribe("state_changed", { entity_id: "light.*", for: "90" })).rejects.toThrow("for needs explicit entity ids");
    await expect(subscribe("state_changed", { entity_id: "light.kitchen", for: "soon" })).rejects.toThrow('for "soon" is not a duration');
  });

  test("state_changed with a pattern matches state_changed events here; from/to skip attribute-only changes", async () => {
    ha.setState("light.kitchen", "off");
    ha.setState("light.porch", "off");
    const sub = await subscribe("state_changed", { entity_id: "light.*", to: "on" });
    ha.setState("binary_sensor.door", "on");
    ha.setState("light.kitchen", "on");
    ha.setState("light.kitchen", "on", { friendly_name: "Kitchen light", brightness: 100 });
    ha.setState("light.porch", "on");
    await until(() => sub.events.length === 2, "two lights on");
    expect(sub.events.map((e) => e.entity_id)).toEqual(["light.kitchen", "light.porch"]);
    expect(sub.events[0]).toMatchObject({ from: "off", to: "on" });
    await sub.close();
  });

  test("event_fired starts a run per event of its type; a dropped connection fails the subscription so Weft reopens it", async () => {
    const sub = await subscribe("event_fired", { event_type: "zha_event" });
    ha.fireEvent("zha_event", { command: "on", device_ieee: "00:11" });
    ha.fireEvent("other_event", {});
    await until(() => sub.events.length === 1, "the zha event");
    expect(sub.events[0]).toMatchObject({ event_type: "zha_event", data: { command: "on", device_ieee: "00:11" }, origin: "LOCAL" });
    expect(ha.connections()).toContain(1);
    ha.dropConnections();
    await until(() => sub.failures.length === 1, "the subscription to fail");
    expect(sub.failures[0].message).toContain("the connection to Home Assistant closed (code 1001: Home Assistant is stopping)");
    await sub.close();
    // A closed subscription stays quiet: no failure reported after close().
    const quiet = await subscribe("event_fired", { event_type: "zha_event" });
    await quiet.close();
    await Bun.sleep(50);
    expect(quiet.failures).toEqual([]);
  });

  test("a socket that goes silent without closing is lost when a ping (HA's ping/pong) goes unanswered", async () => {
    const connection = await connect(allowed, { base: new URL(ha.url), token: ha.token });
    const lost: string[] = [];
    const unwatch = watch(connection, 100, (reason) => void lost.push(reason));
    const before = ha.pings();
    await until(() => ha.pings() >= before + 2, "two pings answered");
    expect(lost).toEqual([]);
    ha.silence(true);
    try {
      await until(() => lost.length === 1, "the silent socket to count as lost");
      expect(lost[0]).toBe("Home Assistant stopped answering pings (no pong within 0.1 s)");
    } finally {
      unwatch();
      connection.close();
      ha.silence(false);
    }
  });
});
