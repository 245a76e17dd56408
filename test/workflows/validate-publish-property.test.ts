/**
 * A definition that passes validation also passes the publish gate (docs/api.md "2. Validate").
 * Property-style: many generated definitions (valid and broken in every way the gate knows),
 * each validated, created and published; the verdicts must agree, and so must the errors.
 */
import { beforeAll, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

/** mulberry32: a seeded generator, so a failure names a reproducible seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
  const chance = (p: number) => r() < p;
  const names: string[] = [];
  let counter = 0;
  const name = () => {
    if (names.length > 0 && chance(0.03)) return pick(names); // duplicate
    if (chance(0.02)) return "bad-name";
    const n = `s${++counter}`;
    names.push(n);
    return n;
  };
  const reference = () => {
    if (chance(0.05)) return "{{ghost.output}}";
    if (chance(0.03)) return "{{trigger.body.x +}}";
    if (names.length > 0 && chance(0.6)) return `{{${pick(names)}.output}}`;
    return pick(["{{trigger.body.name}}", "{{variables.base}}", "{{run.id}}", "plain text", "{{ $sum(trigger.body.items.qty) }}"]);
  };
  const pieceStep = (): any => {
    const kind = pick(["set", "set", "template", "http", "tags", "store", "broken_action", "broken_piece", "bad_pin", "bad_enum", "missing_prop"]);
    const base = { name: name(), type: "PIECE" };
    switch (kind) {
      case "set":
        return { ...base, pieceId: "data", actionId: "set_fields", config: { fields: { a: reference(), b: 1 } } };
      case "template":
        return { ...base, pieceId: "text", actionId: "template", config: { template: "x {a}", values: { a: reference() } } };
      case "http":
        return {
          ...base,
          pieceId: "http",
          actionId: "send_request",
          config: { method: pick(["GET", "POST"]), url: "https://example.com", body_type: "none", auth_type: "none" },
        };
      case "tags":
        return { ...base, pieceId: "tags", actionId: "add_tags", config: { tags: ["x"] } };
      case "store":
        return { ...base, pieceId: "store", actionId: "put", config: { key: "k", value: reference() } };
      case "broken_action":
        return { ...base, pieceId: "data", actionId: "set_feilds", config: {} };
      case "broken_piece":
        return { ...base, pieceId: "nope", actionId: "x", config: {} };
      case "bad_pin":
        return { ...base, pieceId: "data", actionId: "set_fields", pieceVersion: "7.0.0", config: { fields: {} } };
      case "bad_enum":
        return { ...base, pieceId: "http", actionId: "send_request", config: { method: "FETCH", url: "https://example.com" } };
      default:
        return { ...base, pieceId: "text", actionId: "template", config: {} };
    }
  };
  const chain = (depth: number, length: number): any => {
    let first: any;
    let tail: any;
    for (let i = 0; i < length; i++) {
      let node: any;
      const roll = r();
      if (depth < 3 && roll < 0.12) {
        node = { name: name(), type: "ROUTER", branches: [] };
        const count = 1 + Math.floor(r() * 3);
        for (let b = 0; b < count; b++) {
          const fallback = b === count - 1 && chance(0.5);
          node.branches.push({
            name: `b${b}`,
            conditions: fallback
              ? []
              : [
                  [
                    {
                      field: reference(),
                      operator: chance(0.05) ? "lt" : pick(["text_eq", "number_gt", "exists", "list_empty"]),
                      value: chance(0.9) ? 5 : undefined,
                    },
                  ],
                ],
            ...(chance(0.85) ? { firstAction: chain(depth + 1, 1 + Math.floor(r() * 3)) } : {}),
          });
        }
      } else if (depth < 3 && roll < 0.2) {
        node = {
          name: name(),
          type: "LOOP_ON_ITEMS",
          config: chance(0.9) ? { items: "{{trigger.body.items}}" } : {},
          firstLoopAction: chain(depth + 1, 1 + Math.floor(r() * 2)),
        };
      } else if (roll < 0.22) {
        node = { name: name(), type: pick(["SWITCH", "PIECE"]), config: {} };
      } else {
        node = pieceStep();
        if (depth < 3 && chance(0.08)) node.onErrorAction = chain(depth + 1, 1);
        if (chance(0.05)) node.skip = true;
      }
      if (!first) first = node;
      else tail.nextAction = node;
      tail = node;
    }
    return first;
  };
  const trigger = (): any => {
    switch (pick(["manual", "manual", "webhook", "cron", "bad_cron", "poll_missing"])) {
      case "webhook":
        return { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} };
      case "cron":
        return { name: "trigger", type: "cron", pieceId: "schedule", actionId: "cron", config: { expression: "*/5 * * * *", timezone: "UTC" } };
      case "bad_cron":
        return { name: "trigger", type: "cron", pieceId: "schedule", actionId: "cron", config: { expression: "99 * * * *" } };
      case "poll_missing":
        return { name: "trigger", type: "poll", config: {} };
      default:
        return { name: "trigger", type: "manual", config: {} };
    }
  };
  const root = trigger();
  const steps = Math.floor(r() * 6);
  if (steps > 0) root.nextAction = chain(0, steps);
  return { schemaVersion: 2, trigger: root, settings: {}, variables: chance(0.7) ? { base: "https://x" } : {}, annotations: null, pinnedData: {} };
}

test("validate ⇒ publish, over 300 generated definitions (and publish refusals carry the same errors)", async () => {
  let valid = 0;
  let invalid = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const definition = generator(seed);
    const verdict = (await t.req("POST", "/api/workflows/validate", { body: definition })).body.data;
    const created = await t.req("POST", "/api/workflows", { body: { name: `gen ${seed}`, definition } });
    expect(`seed ${seed}: create ${created.status}`).toBe(`seed ${seed}: create 201`);
    const id = created.body.data.id;
    const inContext = (await t.req("POST", `/api/workflows/validate?workflowId=${id}`, { body: created.body.data.definition })).body.data;
    const published = await t.req("POST", `/api/workflows/${id}/publish`);
    if (verdict.valid) {
      valid++;
      expect(`seed ${seed}: publish ${published.status} ${published.text.slice(0, 300)}`).toBe(`seed ${seed}: publish 200 ${published.text.slice(0, 300)}`);
    } else {
      invalid++;
      expect(`seed ${seed}: publish ${published.status}`).toBe(`seed ${seed}: publish 422`);
      expect(published.body.error.details.errors).toEqual(inContext.errors);
    }
    expect(inContext.valid).toBe(verdict.valid);
  }
  // The generator must exercise both sides of the property.
  expect(valid).toBeGreaterThan(30);
  expect(invalid).toBeGreaterThan(50);
}, 120_000);
