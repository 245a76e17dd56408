/** The SDK's checks, display-condition evaluation for the gate, semver pins and the registry. */
import { describe, expect, test } from "bun:test";
import { activeProperties, missingRequired } from "../../src/core/pieces/conditions";
import { dynamicOptions } from "../../src/core/pieces/catalog";
import { builtinRegistry, PieceRegistry } from "../../src/pieces-runtime/registry";
import { satisfiesPin } from "../../src/pieces-runtime/semver";
import { action, definePiece, PieceDefinitionError, Property, Show } from "../../src/pieces-sdk";
import { fixturePiece } from "./fixture-piece";

const run = () => ({});

describe("definePiece refuses mistakes with a message", () => {
  const cases: Array<[string, any, string]> = [
    ["bad id", { id: "My Piece", name: "x", version: "1.0.0" }, "lowercase"],
    ["bad version", { id: "p", name: "x", version: "1.0" }, "semver"],
    ["bad action id", { id: "p", name: "x", version: "1.0.0", actions: [action({ id: "Do-It", name: "x", description: "", run })] }, "snake_case"],
    [
      "duplicate action",
      {
        id: "p",
        name: "x",
        version: "1.0.0",
        actions: [action({ id: "a", name: "x", description: "", run }), action({ id: "a", name: "y", description: "", run })],
      },
      "twice",
    ],
    ["no run", { id: "p", name: "x", version: "1.0.0", actions: [{ id: "a", name: "x", description: "", props: {} }] }, "run(ctx)"],
    [
      "gate not a property",
      {
        id: "p",
        name: "x",
        version: "1.0.0",
        actions: [action({ id: "a", name: "x", description: "", run, props: { b: Property.shortText({ displayConditions: [Show.eq("mode", "x")] }) } })],
      },
      '"mode", which is not a property',
    ],
    [
      "bad operator",
      {
        id: "p",
        name: "x",
        version: "1.0.0",
        actions: [
          action({
            id: "a",
            name: "x",
            description: "",
            run,
            props: { m: Property.shortText(), b: Property.shortText({ displayConditions: [{ field: "m", operator: "gt" as any }] }) },
          }),
        ],
      },
      "eq, neq, contains_any, exists, not_exists",
    ],
    [
      "bad trigger type",
      { id: "p", name: "x", version: "1.0.0", triggers: [{ id: "t", name: "t", description: "", type: "Webhook", props: {} }] },
      "webhook, cron, poll, error, run_finished, callable",
    ],
    [
      "poll without poll()",
      { id: "p", name: "x", version: "1.0.0", triggers: [{ id: "t", name: "t", description: "", type: "poll", props: {} }] },
      "poll(ctx)",
    ],
  ];
  for (const [name, input, message] of cases) {
    test(name, () => {
      expect(() => definePiece(input)).toThrow(PieceDefinitionError);
      expect(() => definePiece(input)).toThrow(message);
    });
  }

  test("a valid piece keyed by id, with defaults filled", () => {
    const piece = definePiece({ id: "p", name: "P", version: "1.0.0", description: "d", actions: [action({ id: "a", name: "A", description: "", run })] });
    expect(Object.keys(piece.actions)).toEqual(["a"]);
    expect(piece.actions.a.sideEffects).toBe("external");
    expect(piece.triggers).toEqual({});
    // Idempotent: a defined piece may be defined again (the loader does).
    expect(definePiece(piece as any).actions.a.id).toBe("a");
  });

  test("property builders carry spec fields", () => {
    expect(
      Property.staticDropdown({
        options: [
          { label: "One", value: 1 },
          { label: "Two", value: 2 },
        ],
      }),
    ).toEqual({ type: "integer", propertyType: "static_dropdown", enum: [1, 2], enumLabels: { "1": "One", "2": "Two" } });
    expect(Property.code({ required: true })).toEqual({ type: "code", propertyType: "code", language: "javascript", required: true });
    expect(Property.staticMultiSelect({ options: ["a", "b"] })).toEqual({
      type: "array",
      propertyType: "static_multi_select",
      items: { type: "string", enum: ["a", "b"] },
    });
    expect(Property.shortText({ minLength: 2, maxLength: 5, pattern: "^x" })).toEqual({
      type: "string",
      propertyType: "short_text",
      minLength: 2,
      maxLength: 5,
      pattern: "^x",
    });
  });
});

describe("activeProperties / missingRequired (what the publish gate uses)", () => {
  const props = builtinRegistry().action("http", "send_request")!.props;

  test("gates left out take their defaults (body_type none, auth_type none)", () => {
    expect(Object.keys(activeProperties(props, { method: "GET", url: "https://x" }))).toEqual([
      "method",
      "url",
      "headers",
      "query",
      "body_type",
      "auth_type",
      "timeout_ms",
      "fail_on_error",
      "response_type",
    ]);
    expect(missingRequired(props, { method: "GET" })).toEqual(["url"]);
  });

  test("the gates in force decide what is required", () => {
    expect(missingRequired(props, { method: "POST", url: "https://x", body_type: "json", auth_type: "basic" })).toEqual(["body_json", "username"]);
    expect(missingRequired(props, { method: "POST", url: "https://x", body_type: "json", body_json: {}, auth_type: "basic", username: "u" })).toEqual([]);
  });

  test("a gate holding an expression keeps its fields but does not demand them", () => {
    expect(Object.keys(activeProperties(props, { body_type: "{{ trigger.body.kind }}" }))).toContain("body_raw");
    expect(missingRequired(props, { method: "GET", url: "https://x", body_type: "{{ trigger.body.kind }}" })).toEqual([]);
  });

  test("config values are coerced like query text; contains_any and chains resolve", () => {
    const fixture = fixturePiece().actions.gated.props;
    expect(Object.keys(activeProperties(fixture, { enabled: "true", events: ["push"], count: "3" }))).toEqual(
      expect.arrayContaining(["when_enabled", "hook_secret", "many"]),
    );
    expect(Object.keys(activeProperties(fixture, { enabled: false, events: ["release"] }))).not.toEqual(expect.arrayContaining(["when_enabled"]));
    expect(Object.keys(activeProperties(fixture, { events: ["release"] }))).not.toContain("hook_secret");
    const chain = {
      a: Property.checkbox(),
      b: Property.checkbox({ displayConditions: [Show.eq("a", true)] }),
      c: Property.shortText({ displayConditions: [Show.eq("b", true)] }),
    };
    // b is not in force (a false), so c's gate counts as absent even though b=true was left in the config.
    expect(Object.keys(activeProperties(chain, { a: false, b: true }))).toEqual(["a"]);
  });
});

describe("pins (caret: same major, served ≥ pin)", () => {
  test("caret semantics", () => {
    expect(satisfiesPin("1.4.0", "1.0.0")).toBe(true);
    expect(satisfiesPin("1.4.0", "1.4.0")).toBe(true);
    expect(satisfiesPin("1.4.0", "1.4.1")).toBe(false);
    expect(satisfiesPin("1.4.0", "1.5.0")).toBe(false);
    expect(satisfiesPin("1.4.0", "2.0.0")).toBe(false);
    expect(satisfiesPin("2.0.0", "1.9.0")).toBe(false);
    expect(satisfiesPin("1.4.0", "^1.2")).toBe(true);
    expect(satisfiesPin("1.4.0", "garbage")).toBe(false);
  });

  test("registry: servedVersion, isRunnable, lookups", () => {
    const registry = new PieceRegistry([fixturePiece()]);
    expect(registry.servedVersion("fixture")).toBe("2.3.1");
    expect(registry.servedVersion("nope")).toBeUndefined();
    expect(registry.isRunnable("fixture")).toBe(true);
    expect(registry.isRunnable("fixture", "")).toBe(true);
    expect(registry.isRunnable("fixture", "2.0.0")).toBe(true);
    expect(registry.isRunnable("fixture", "2.4.0")).toBe(false);
    expect(registry.isRunnable("fixture", "3.0.0")).toBe(false);
    expect(registry.isRunnable("nope")).toBe(false);
    expect(registry.action("fixture", "gated")?.id).toBe("gated");
    expect(registry.action("fixture", "toString")).toBeUndefined();
    expect(registry.trigger("fixture", "tick")?.type).toBe("poll");
    expect(registry.trigger("fixture", "gated")).toBeUndefined();
  });

  test("every built-in is version 1.x and declares sample data for each step", () => {
    for (const piece of builtinRegistry().list()) {
      expect(piece.version).toMatch(/^1\.\d+\.\d+$/);
      for (const step of [...Object.values(piece.actions), ...Object.values(piece.triggers)]) expect(step.sampleData, `${piece.id}.${step.id}`).toBeDefined();
    }
  });
});

describe("dynamic options time out with a clear 4xx", () => {
  test("a piece that never answers", async () => {
    const registry = new PieceRegistry([fixturePiece()]);
    const promise = dynamicOptions(
      registry,
      { fetch, timeoutMs: 50 },
      { workspaceId: "w", pieceId: "fixture", actionId: "gated", propertyName: "dyn", config: { slow: true } },
    );
    await expect(promise).rejects.toMatchObject({ status: 422, message: expect.stringContaining("did not arrive within") });
  });
});
