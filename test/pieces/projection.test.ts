/** The schema projection's narrowing rules (docs/pieces.md "Schema projections"), through the API. */
import { beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { fixturePiece } from "./fixture-piece";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
  t.deps.pieces.register(fixturePiece());
});

const gated = async (query = "") => {
  const res = await t.req("GET", `/api/pieces/fixture/actions/gated${query}`);
  expect(res.status).toBe(200);
  return res.body.data;
};
const names = (p: any) => Object.keys(p.inputSchema.properties);

describe("projection shape", () => {
  test("carries piece id and served version, the step's identity, schemas and every list", async () => {
    const p = await gated();
    expect(p).toMatchObject({
      pieceId: "fixture",
      pieceVersion: "2.3.1",
      id: "gated",
      name: "Gated",
      description: "Every kind of gate",
      sideEffects: "pure",
      sampleData: { ok: true },
    });
    expect(p.inputSchema.type).toBe("object");
    expect(p.outputSchema).toEqual({
      type: "object",
      properties: { ok: { type: "boolean", required: true }, note: { type: "string", required: false } },
      required: ["ok"],
    });
    expect(p.filteredBy).toEqual({});
    expect(p.ignored).toEqual([]);
  });

  test("properties are spec-2.5 property objects: no functions, labels or unknown keys", async () => {
    const p = await gated();
    const allowed = [
      "type",
      "description",
      "default",
      "enum",
      "enumLabels",
      "format",
      "properties",
      "items",
      "propertyType",
      "required",
      "minLength",
      "maxLength",
      "min",
      "max",
      "pattern",
      "refreshers",
      "language",
      "displayConditions",
    ];
    for (const prop of Object.values<any>(p.inputSchema.properties)) for (const key of Object.keys(prop)) expect(allowed).toContain(key);
    expect(p.inputSchema.properties.mode).toMatchObject({ type: "string", enum: ["a", "b", "c"], propertyType: "static_dropdown", required: true });
    expect(p.inputSchema.properties.a_field.displayConditions).toEqual([{ field: "mode", operator: "eq", value: "a" }]);
    expect(p.inputSchema.properties.hook_secret.displayConditions).toEqual([
      { field: "events", operator: "contains_any", value: "push,issues", values: ["push", "issues"] },
    ]);
    expect(p.inputSchema.properties.dyn).toMatchObject({ propertyType: "dropdown", refreshers: ["mode"] });
  });

  test("with no gate supplied every property is kept; gated ones are conditional and not required", async () => {
    const p = await gated();
    expect(names(p)).toEqual([
      "mode",
      "a_field",
      "b_field",
      "enabled",
      "when_enabled",
      "count",
      "many",
      "events",
      "hook_secret",
      "region",
      "region_note",
      "nested",
      "list",
      "plain",
      "dyn",
    ]);
    expect(p.inputSchema.required).toEqual(["mode", "plain"]);
    expect(p.conditionalFields).toEqual(["a_field", "b_field", "when_enabled", "many", "hook_secret", "region_note"]);
    expect(p.unresolved).toEqual(["mode", "enabled", "count", "events", "region"]);
    expect(p.dynamicFields).toEqual(["dyn"]);
  });
});

describe("narrowing rules", () => {
  test("rule 1: a supplied gate drops what it rules out; kept gated fields become required", async () => {
    const p = await gated("?mode=a");
    expect(names(p)).toContain("a_field");
    expect(names(p)).not.toContain("b_field");
    expect(p.inputSchema.required).toEqual(["mode", "a_field", "plain"]);
    expect(p.conditionalFields).not.toContain("a_field");
    expect(p.unresolved).not.toContain("mode");
    expect(p.filteredBy).toEqual({ mode: "a" });

    const b = await gated("?mode=b");
    expect(names(b)).not.toContain("a_field");
    expect(b.inputSchema.required).toContain("b_field");
  });

  test("rule 2: boolean coercion — 'true' matches a boolean gate, 'false' rules it out", async () => {
    const on = await gated("?enabled=true");
    expect(names(on)).toContain("when_enabled");
    expect(on.inputSchema.required).toContain("when_enabled");
    expect(on.filteredBy).toEqual({ enabled: "true" });
    const off = await gated("?enabled=false");
    expect(names(off)).not.toContain("when_enabled");
  });

  test("rule 2: number coercion — '3' (and '3.0') match the number 3, '4' does not", async () => {
    expect(names(await gated("?count=3"))).toContain("many");
    expect(names(await gated("?count=3.0"))).toContain("many");
    const four = await gated("?count=4");
    expect(names(four)).not.toContain("many");
    expect(four.filteredBy).toEqual({ count: "4" });
  });

  test("rule 2: a contains_any gate accepts a comma-separated list (or a repeated key)", async () => {
    expect(names(await gated("?events=release,push"))).toContain("hook_secret");
    expect((await gated("?events=release,push")).inputSchema.required).toContain("hook_secret");
    expect(names(await gated("?events=release"))).not.toContain("hook_secret");
    const repeated = await gated("?events=release&events=issues");
    expect(names(repeated)).toContain("hook_secret");
    expect(repeated.filteredBy).toEqual({ events: "release,issues" });
  });

  test("exists: an empty value rules out, any value keeps", async () => {
    expect(names(await gated("?region="))).not.toContain("region_note");
    const eu = await gated("?region=eu");
    expect(names(eu)).toContain("region_note");
    expect(eu.inputSchema.required).toContain("region_note");
  });

  test("rule 3: an unsupplied gate keeps its fields as conditional while supplied gates resolve", async () => {
    const p = await gated("?mode=a");
    expect(p.conditionalFields).toEqual(["when_enabled", "many", "hook_secret", "region_note"]);
    expect(p.inputSchema.required).not.toContain("when_enabled");
    expect(p.unresolved).toEqual(["enabled", "count", "events", "region"]);
  });

  test("rule 4: a misspelled key lands in ignored and filters nothing", async () => {
    const p = await gated("?mdoe=a");
    expect(p.ignored).toEqual(["mdoe"]);
    expect(p.filteredBy).toEqual({});
    expect(names(p)).toContain("b_field");
  });

  test("rule 4: a real property name that gates nothing lands in ignored", async () => {
    const p = await gated("?plain=hello&mode=a");
    expect(p.ignored).toEqual(["plain"]);
    expect(p.filteredBy).toEqual({ mode: "a" });
  });

  test("rule 4: reserved view and gateValues never land in ignored or filteredBy", async () => {
    const p = await gated("?view=summary&gateValues=x&mode=a");
    expect(p.ignored).toEqual([]);
    expect(p.filteredBy).toEqual({ mode: "a" });
  });

  test("there is no operation parameter: it is just an ignored key", async () => {
    const p = await gated("?operation=create");
    expect(p.ignored).toEqual(["operation"]);
  });

  test("rule 5: nested properties and array items are never filtered", async () => {
    const p = await gated("?mode=a");
    expect(p.inputSchema.properties.nested.properties.inner).toEqual({
      type: "string",
      required: true,
      displayConditions: [{ field: "mode", operator: "eq", value: "z" }],
    });
    expect(p.inputSchema.properties.list.items.properties.x.displayConditions).toEqual([{ field: "mode", operator: "eq", value: "z" }]);
    // A nested property's name is not a top-level gate either.
    expect((await gated("?inner=1")).ignored).toEqual(["inner"]);
  });

  test("rule 6: the summary's discriminators name the gates and their legal values", async () => {
    const res = await t.req("GET", "/api/pieces/fixture?view=summary");
    const d = res.body.data.actions.find((a: any) => a.id === "gated").discriminators;
    expect(d).toEqual({ mode: ["a", "b", "c"], enabled: [true, false], count: [3], events: ["push", "issues", "release"], region: [] });
  });

  test("identical requests answer identically (cached) and different ones differently", async () => {
    const a = await t.req("GET", "/api/pieces/fixture/actions/gated?mode=a&enabled=true");
    const b = await t.req("GET", "/api/pieces/fixture/actions/gated?enabled=true&mode=a");
    const c = await t.req("GET", "/api/pieces/fixture/actions/gated?mode=b");
    expect(a.body).toEqual(b.body);
    expect(c.body).not.toEqual(a.body);
    expect(a.headers.get("content-type")).toContain("application/json");
  });
});

describe("built-in examples", () => {
  test("http.send_request with two gates: exactly the fields that body and auth need", async () => {
    const res = await t.req("GET", "/api/pieces/http/actions/send_request?body_type=json&auth_type=bearer");
    const p = res.body.data;
    expect(names(p)).toEqual([
      "method",
      "url",
      "headers",
      "query",
      "body_type",
      "body_json",
      "auth_type",
      "token",
      "timeout_ms",
      "fail_on_error",
      "response_type",
    ]);
    expect(p.inputSchema.required).toEqual(["method", "url", "body_json", "token"]);
    expect(p.filteredBy).toEqual({ body_type: "json", auth_type: "bearer" });
    expect(p.unresolved).toEqual([]);
    expect(p.conditionalFields).toEqual([]);
    expect(p.sideEffects).toBe("external");
  });

  test("github.create_issue lists repository as dynamic", async () => {
    const p = (await t.req("GET", "/api/pieces/github/actions/create_issue")).body.data;
    expect(p.dynamicFields).toEqual(["repository"]);
    expect(p.inputSchema.properties.repository.refreshers).toEqual(["auth"]);
  });
});

describe("trigger projection", () => {
  test("same narrowing; sideEffects empty; sampleData is the declared example", async () => {
    const res = await t.req("GET", "/api/pieces/fixture/triggers/tick?source=url&gateValues=1&sorce=x");
    expect(res.status).toBe(200);
    const p = res.body.data;
    expect(p.sideEffects).toBe("");
    expect(p.sampleData).toEqual({ n: 1 });
    expect(names(p)).toEqual(["source", "url"]);
    expect(p.inputSchema.required).toEqual(["source", "url"]);
    expect(p.ignored).toEqual(["sorce"]);
    expect(p.filteredBy).toEqual({ source: "url" });
  });

  test("a configuration-dependent trigger's projection carries the generic declared sample", async () => {
    const p = (await t.req("GET", "/api/pieces/schedule/triggers/cron?expression=0%209%20*%20*%20*")).body.data;
    expect(p.sampleData).toEqual({ scheduledAt: "2025-01-06T09:00:00.000Z", expression: "0 9 * * 1-5", timezone: "UTC" });
    expect(p.ignored).toEqual(["expression"]);
  });

  test("the projection does not carry the trigger type (read it from the piece detail)", async () => {
    const p = (await t.req("GET", "/api/pieces/fixture/triggers/tick")).body.data;
    expect(p.type).toBeUndefined();
  });
});

describe("404s name the valid ids", () => {
  test("unknown action lists every action of the piece", async () => {
    const res = await t.req("GET", "/api/pieces/fixture/actions/gatd");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("NOT_FOUND");
    expect(res.body.error.message).toContain('"gatd"');
    expect(res.body.error.message).toContain('"gated", "other"');
  });

  test("unknown trigger lists every trigger of the piece", async () => {
    const res = await t.req("GET", "/api/pieces/fixture/triggers/tock");
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('"tick", "hook"');
  });

  test("a trigger id is not an action id", async () => {
    const res = await t.req("GET", "/api/pieces/fixture/actions/tick");
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('"gated", "other"');
  });

  test("unknown piece lists the pieces", async () => {
    const res = await t.req("GET", "/api/pieces/nope/actions/x");
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('"http"');
    expect(res.body.error.message).toContain('"fixture"');
  });
});
