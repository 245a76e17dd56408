/** The gate's diagnostics (docs/api.md "2. Validate") name the fault and the admissible set. */
import { beforeAll, describe, expect, test } from "bun:test";
import { CONDITION_OPERATORS } from "../../src/schema/workflow";
import { testApp, type TestApp } from "../support/app";
import { chainDefinition, createWorkflow, greetDefinition, loopDefinition, stockDefinition } from "./fixtures";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

async function validate(definition: unknown) {
  const res = await t.req("POST", "/api/workflows/validate", { body: definition });
  expect(res.status).toBe(200);
  return res.body.data as { valid: boolean; errors: Array<{ path: string; code: string; message: string; allowed?: unknown[] }>; warnings: any[] };
}

const only = (d: Awaited<ReturnType<typeof validate>>, code: string) => {
  const found = d.errors.filter((e) => e.code === code);
  expect(found.length).toBeGreaterThan(0);
  return found[0]!;
};

describe("POST /api/workflows/validate", () => {
  test("the examples validate, and the diagnostics have the documented shape", async () => {
    for (const d of [greetDefinition(), loopDefinition(), stockDefinition()]) {
      const result = await validate(d);
      expect(result.errors).toEqual([]);
      expect(result.valid).toBe(true);
      expect(Array.isArray(result.warnings)).toBe(true);
    }
  });

  test("writes nothing", async () => {
    const before = (await t.req("GET", "/api/workflows")).body.total;
    await validate(greetDefinition());
    expect((await t.req("GET", "/api/workflows")).body.total).toBe(before);
  });

  test("unknown action id: names every action of the piece", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.actionId = "set_feilds";
    const e = only(await validate(d), "UNKNOWN_ACTION");
    expect(e.path).toBe("trigger.nextAction.actionId");
    expect(e.allowed).toEqual(Object.keys(t.deps.pieces.get("data")!.actions));
    expect(e.message).toContain("set_fields");
  });

  test("unknown piece: names the pieces served; unrunnable pin: names the served version", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.pieceId = "dta";
    const unknown = only(await validate(d), "UNKNOWN_PIECE");
    expect(unknown.allowed).toContain("data");
    const pinned = greetDefinition();
    pinned.trigger.nextAction.pieceVersion = "9.0.0";
    const e = only(await validate(pinned), "PIECE_UNAVAILABLE");
    expect(e.path).toBe("trigger.nextAction.pieceVersion");
    expect(e.allowed).toEqual([t.deps.pieces.servedVersion("data")]);
    expect(e.message).toContain(t.deps.pieces.servedVersion("data")!);
  });

  test("unknown trigger and a trigger of the wrong kind", async () => {
    const d = greetDefinition();
    d.trigger.actionId = "catch";
    const e = only(await validate(d), "UNKNOWN_TRIGGER");
    expect(e.allowed).toEqual(["catch_webhook"]);
    const mismatch = greetDefinition();
    mismatch.trigger.type = "cron";
    expect(only(await validate(mismatch), "TRIGGER_TYPE_MISMATCH").allowed).toEqual(["webhook"]);
    const kind = greetDefinition();
    kind.trigger.type = "sometimes";
    expect(only(await validate(kind), "INVALID_TRIGGER_TYPE").allowed).toContain("manual");
    const pieceName = greetDefinition();
    pieceName.trigger = { name: "trigger", type: "schedule", pieceId: "schedule", actionId: "every", config: { interval: 5, unit: "minutes" } };
    expect(only(await validate(pieceName), "INVALID_TRIGGER_TYPE").message).toContain('use type "cron" with pieceId "schedule"');
    const bare = greetDefinition();
    bare.trigger = { name: "trigger", type: "cron", config: {} };
    const missing = only(await validate(bare), "MISSING_FIELD");
    expect(missing.allowed).toContain("schedule/cron");
  });

  test("illegal operator names every operator", async () => {
    const d = stockDefinition();
    d.trigger.nextAction.nextAction.branches[0].conditions[0][0].operator = "lt";
    const e = only(await validate(d), "UNKNOWN_OPERATOR");
    expect(e.path).toBe("trigger.nextAction.nextAction.branches.0.conditions.0.0.operator");
    expect(e.allowed).toEqual([...CONDITION_OPERATORS]);
  });

  test("illegal enum value names the legal values", async () => {
    const d = stockDefinition();
    d.trigger.nextAction.config.method = "FETCH";
    const e = only(await validate(d), "INVALID_ENUM_VALUE");
    expect(e.path).toBe("trigger.nextAction.config.method");
    expect(e.allowed).toContain("GET");
    expect(e.allowed).toContain("POST");
  });

  test("required properties missing, given the display conditions in force", async () => {
    const d = stockDefinition();
    delete d.trigger.nextAction.config.url;
    expect(only(await validate(d), "MISSING_PROPERTY").path).toBe("trigger.nextAction.config.url");
    // body_json is required only when body_type is json.
    const json = stockDefinition();
    json.trigger.nextAction.config.body_type = "json";
    const e = only(await validate(json), "MISSING_PROPERTY");
    expect(e.path).toBe("trigger.nextAction.config.body_json");
    expect(e.allowed).toContain("body_json");
    expect((await validate(stockDefinition())).errors.some((x) => x.path.endsWith("body_json"))).toBe(false);
  });

  test("expression syntax errors carry their position", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.config.fields.name = "hi {{trigger.body.name +}}";
    const e = only(await validate(d), "EXPRESSION_SYNTAX");
    expect(e.path).toBe("trigger.nextAction.config.fields.name");
    expect(e.message).toMatch(/position \d+/);
  });

  test("expression roots must name an earlier step; the allowed list names those that may be read", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.config.fields.name = "{{reply.output.status}}";
    const later = only(await validate(d), "UNKNOWN_REFERENCE");
    expect(later.message).toContain("does not run before");
    expect(later.allowed).toEqual(expect.arrayContaining(["trigger", "variables", "run"]));
    expect(later.allowed).not.toContain("reply");
    const typo = greetDefinition();
    typo.trigger.nextAction.nextAction.config.body = "{{gret.output}}";
    const e = only(await validate(typo), "UNKNOWN_REFERENCE");
    expect(e.allowed).toEqual(expect.arrayContaining(["trigger", "greet"]));
  });

  test("scope: a loop body reads its loop; sibling branches do not see each other; an error branch reads the failed step", async () => {
    expect((await validate(loopDefinition())).valid).toBe(true);
    const d = stockDefinition();
    d.trigger.nextAction.nextAction.branches[1].firstAction.config.tags = ["{{tag_low.output.tags}}"];
    const e = only(await validate(d), "UNKNOWN_REFERENCE");
    expect(e.path).toContain("branches.1.firstAction");
    // after the router, both branches' steps are earlier steps
    const after = stockDefinition();
    after.trigger.nextAction.nextAction.nextAction = {
      name: "summary",
      type: "PIECE",
      pieceId: "data",
      actionId: "set_fields",
      config: { fields: { low: "{{tag_low.output}}", ok: "{{tag_ok.output}}", failed: "{{note_failure.output}}" } },
    };
    expect((await validate(after)).errors).toEqual([]);
  });

  test("duplicate step names, reserved names and names unusable in expressions", async () => {
    const d = chainDefinition(2);
    d.trigger.nextAction.nextAction.name = "s1";
    const dup = only(await validate(d), "DUPLICATE_STEP_NAME");
    expect(dup.message).toContain("trigger.nextAction");
    const reserved = chainDefinition(1);
    reserved.trigger.nextAction.name = "variables";
    only(await validate(reserved), "RESERVED_STEP_NAME");
    const dashed = chainDefinition(1);
    dashed.trigger.nextAction.name = "send-mail";
    expect(only(await validate(dashed), "INVALID_STEP_NAME").message).toContain("send_mail");
  });

  test("invalid cron expression and time zone", async () => {
    const d = stockDefinition();
    d.trigger.config.expression = "61 * * * *";
    const e = only(await validate(d), "INVALID_CRON");
    expect(e.path).toBe("trigger.config.expression");
    const seven = stockDefinition();
    seven.trigger.config.expression = "0 0 * * * * *";
    only(await validate(seven), "INVALID_CRON");
    const zone = stockDefinition();
    zone.trigger.config.timezone = "Mars/Olympus";
    only(await validate(zone), "INVALID_TIMEZONE");
  });

  test("a literal value outside the property's declared bounds is an error naming the allowed range", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.nextAction.config.status = 9999;
    const e = only(await validate(d), "OUT_OF_RANGE");
    expect(e.path).toBe("trigger.nextAction.nextAction.config.status");
    expect(e.message).toContain("100 to 599");
    d.trigger.nextAction.nextAction.config.status = "{{trigger.body.code}}";
    expect((await validate(d)).errors.filter((x) => x.code === "OUT_OF_RANGE")).toEqual([]);
  });

  test("a schedule firing more often than the scheduler's minimum interval is refused, so validate ⇒ publish holds", async () => {
    const d = stockDefinition();
    d.trigger.config.expression = "* * * * * *"; // every second; the default minimum is 60 s
    const e = only(await validate(d), "INVALID_SCHEDULE");
    expect(e.message).toContain("minimum");
    const created = await t.req("POST", "/api/workflows", { body: { name: "too often", definition: d } });
    const publish = await t.req("POST", `/api/workflows/${created.body.data.id}/publish`);
    expect(publish.status).toBe(422);
    expect((await t.req("GET", `/api/workflows/${created.body.data.id}`)).body.data.status).toBe("draft");
  });

  test("missing connection for a piece with auth names how to get one; a connection of another piece is refused", async () => {
    const d = chainDefinition(0);
    d.trigger.nextAction = { name: "issue", type: "PIECE", pieceId: "github", actionId: "create_issue", config: { repository: "a/b", title: "x" } };
    const e = only(await validate(d), "MISSING_CONNECTION");
    expect(e.path).toBe("trigger.nextAction.connectionId");
    expect(e.message).toContain("POST /api/connections");
    d.trigger.nextAction.connectionId = crypto.randomUUID();
    const unknown = only(await validate(d), "UNKNOWN_CONNECTION");
    expect(unknown.allowed).toEqual([]);
  });

  test("node kinds: unknown type, router without branches, loop without items, fields on the wrong kind", async () => {
    const d = chainDefinition(1);
    d.trigger.nextAction.type = "SWITCH";
    expect(only(await validate(d), "INVALID_NODE_TYPE").allowed).toEqual(["PIECE", "ROUTER", "LOOP_ON_ITEMS"]);
    const router = chainDefinition(0);
    router.trigger.nextAction = { name: "r", type: "ROUTER", branches: [] };
    only(await validate(router), "MISSING_FIELD");
    const loop = chainDefinition(0);
    loop.trigger.nextAction = { name: "l", type: "LOOP_ON_ITEMS", config: {} };
    expect(only(await validate(loop), "MISSING_PROPERTY").path).toBe("trigger.nextAction.config.items");
    const misplaced = chainDefinition(1);
    misplaced.trigger.nextAction.firstLoopAction = { name: "x", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: {} } };
    only(await validate(misplaced), "FIELD_NOT_ALLOWED");
  });

  test("structural faults come back as diagnostics naming the allowed keys", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.sideEffects = "none";
    const e = only(await validate(d), "UNKNOWN_FIELD");
    expect(e.path).toBe("trigger.nextAction.sideEffects");
    expect(e.allowed).toContain("onErrorAction");
    const wrong = await validate({ schemaVersion: 1, trigger: { name: "t", type: "manual" } });
    expect(wrong.valid).toBe(false);
    expect(wrong.errors[0]!.path).toBe("schemaVersion");
  });

  test("limits: more than 500 steps is an error", async () => {
    only(await validate(chainDefinition(501)), "TOO_MANY_STEPS");
  });

  test("errorWorkflowId naming no workflow of the workspace is a warning; naming one clears it", async () => {
    const d = greetDefinition();
    d.settings.errorWorkflowId = crypto.randomUUID();
    const missing = await validate(d);
    expect(missing.valid).toBe(true);
    expect(missing.warnings.map((w) => [w.path, w.code])).toEqual([["settings.errorWorkflowId", "UNKNOWN_WORKFLOW"]]);
    const handler = await createWorkflow(t, { name: "errors" });
    d.settings.errorWorkflowId = handler.id;
    const named = await validate(d);
    expect(named.valid).toBe(true);
    expect(named.warnings).toEqual([]);
  });

  test("warnings: unknown config keys, undefined variables, an unreachable branch", async () => {
    const d = stockDefinition();
    d.trigger.nextAction.config.retries = 3;
    d.trigger.nextAction.config.url = "{{variables.apiBsae}}/stock";
    d.trigger.nextAction.nextAction.branches.reverse();
    const result = await validate(d);
    expect(result.valid).toBe(true);
    const codes = result.warnings.map((w) => w.code);
    expect(codes).toEqual(expect.arrayContaining(["UNKNOWN_PROPERTY", "UNKNOWN_VARIABLE", "UNREACHABLE_BRANCH"]));
    const variable = result.warnings.find((w) => w.code === "UNKNOWN_VARIABLE");
    expect(variable.allowed).toEqual(["apiBase"]);
  });

  test("a create/update body ({name, definition}) is accepted too", async () => {
    const res = await t.req("POST", "/api/workflows/validate", { body: { name: "x", definition: greetDefinition() } });
    expect(res.body.data.valid).toBe(true);
  });

  test("each node's valid flag reflects its own errors", async () => {
    const d = greetDefinition();
    d.trigger.nextAction.nextAction.actionId = "reply";
    const wf = await createWorkflow(t, { definition: d });
    expect(wf.definition.trigger.valid).toBe(true);
    expect(wf.definition.trigger.nextAction.valid).toBe(true);
    expect(wf.definition.trigger.nextAction.nextAction.valid).toBe(false);
  });
});
