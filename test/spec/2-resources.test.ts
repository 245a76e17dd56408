/**
 * Spec 2.2, 2.3, 2.5 and 9.3 checked the way an outside reviewer reads them: the type of every field,
 * not only its presence (presence is in test/workflows/workflows-api.test.ts), every built-in
 * projection's full shape, and pieceVersion in piece detail.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { testApp, type TestApp } from "../support/app";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const example = (file: string) => JSON.parse(readFileSync(resolve(import.meta.dir, "../fixtures/examples", file), "utf8"));
const isObject = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

describe("2.2 Workflow: every field has its type (create response of the canonical webhook example)", () => {
  // field, check — one row per row of the spec table
  const table: [string, (v: any) => boolean][] = [
    ["id", (v) => UUID.test(v)],
    ["name", (v) => v === "Greet callers"],
    ["description", (v) => typeof v === "string"],
    ["definition", (v) => isObject(v) && v.schemaVersion === 2],
    ["status", (v) => v === "draft"],
    ["triggerType", (v) => v === "webhook"],
    ["cronExpression", (v) => v === null || typeof v === "string"],
    ["webhookToken", (v) => typeof v === "string" && v.length >= 20],
    ["latestVersionId", (v) => v === null],
    ["definitionRev", (v) => Number.isInteger(v) && v === 1],
    ["hasUnpublishedChanges", (v) => v === true],
    ["folderId", (v) => v === null],
    ["tags", (v) => Array.isArray(v) && v.length === 0],
    ["testPayloads", (v) => isObject(v)],
    ["pinnedData", (v) => isObject(v)],
    ["workspaceId", (v) => UUID.test(v)],
    ["orgId", (v) => UUID.test(v)],
    ["createdBy", (v) => UUID.test(v)],
    ["createdAt", (v) => ISO.test(v)],
    ["updatedAt", (v) => ISO.test(v)],
    ["lastRun", (v) => v === null || (isObject(v) && typeof v.status === "string" && ISO.test(v.startedAt))],
  ];
  let wf: any;
  beforeAll(async () => {
    const res = await t.req("POST", "/api/workflows", { body: example("webhook-greet-respond.json") });
    expect(res.status).toBe(201);
    wf = res.body.data;
  });
  for (const [field, check] of table) {
    test(field, () => {
      expect(Object.hasOwn(wf, field)).toBe(true);
      expect({ field, value: wf[field], ok: check(wf[field]) }).toEqual({ field, value: wf[field], ok: true });
    });
  }

  test("after publish: status active, latestVersionId a uuid, no unpublished changes; definitionRev unchanged", async () => {
    const live = (await t.req("POST", `/api/workflows/${wf.id}/publish`)).body.data;
    expect(live.status).toBe("active");
    expect(live.latestVersionId).toMatch(UUID);
    expect(live.hasUnpublishedChanges).toBe(false);
    expect(live.definitionRev).toBe(wf.definitionRev);
  });
});

describe("2.3 FlowVersion: schemaVersion is 2", () => {
  const base = { trigger: { name: "trigger", type: "manual" } };
  const table: [string, unknown, number][] = [
    ["2 is stored", 2, 201],
    ["1 is refused", 1, 400],
    ["3 is refused", 3, 400],
    ["missing is refused", undefined, 400],
  ];
  for (const [label, schemaVersion, status] of table) {
    test(label, async () => {
      const res = await t.req("POST", "/api/workflows", { body: { name: "sv", definition: { ...base, schemaVersion } } });
      expect(res.status).toBe(status);
      if (status === 201) expect(res.body.data.definition.schemaVersion).toBe(2);
      else expect(res.body.error.message).toContain("schemaVersion");
    });
  }

  test("every node kind and every settings field survives create with its type", async () => {
    const res = await t.req("POST", "/api/workflows", { body: example("schedule-fetch-route.json") });
    expect(res.status).toBe(201);
    const d = res.body.data.definition;
    expect(Object.keys(d).sort()).toEqual(["annotations", "pinnedData", "schemaVersion", "settings", "trigger", "variables"]);
    expect(typeof d.trigger.valid).toBe("boolean");
    expect(typeof d.trigger.pieceVersion).toBe("string");
  });
});

describe("2.5 every built-in action and trigger projection has the full shape; lists are [] never null", () => {
  test("all of them", async () => {
    const pieces = (await t.req("GET", "/api/pieces?limit=100")).body.data as any[];
    expect(pieces.length).toBeGreaterThan(5);
    let checked = 0;
    for (const piece of pieces) {
      for (const [kind, ids] of [
        ["actions", piece.actions],
        ["triggers", piece.triggers],
      ] as const) {
        for (const id of ids as string[]) {
          const res = await t.req("GET", `/api/pieces/${piece.id}/${kind}/${id}`);
          expect(res.status).toBe(200);
          const p = res.body.data;
          const where = `${piece.id}/${kind}/${id}`;
          expect({ where, pieceId: p.pieceId, pieceVersion: p.pieceVersion, id: p.id }).toEqual({ where, pieceId: piece.id, pieceVersion: piece.version, id });
          for (const key of ["name", "description", "sideEffects"]) expect({ where, key, type: typeof p[key] }).toEqual({ where, key, type: "string" });
          if (kind === "triggers") expect({ where, sideEffects: p.sideEffects }).toEqual({ where, sideEffects: "" });
          else expect(p.sideEffects).not.toBe("");
          for (const schema of [p.inputSchema, p.outputSchema]) {
            expect(typeof schema.type).toBe("string");
            expect(isObject(schema.properties)).toBe(true);
            expect(Array.isArray(schema.required)).toBe(true);
            for (const prop of Object.values(schema.properties) as any[]) expect(typeof prop.type).toBe("string");
          }
          expect({ where, sampleData: isObject(p.sampleData) }).toEqual({ where, sampleData: true });
          expect(isObject(p.filteredBy)).toBe(true);
          for (const key of ["ignored", "unresolved", "conditionalFields", "dynamicFields"])
            expect({ where, key, array: Array.isArray(p[key]) }).toEqual({ where, key, array: true });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});

describe("9.3 blank pins are filled with the served version; piece detail and projections report pieceVersion", () => {
  test("detail, summary and projection report the version that filled the pin", async () => {
    const created = (await t.req("POST", "/api/workflows", { body: example("webhook-greet-respond.json") })).body.data;
    const pin = created.definition.trigger.nextAction.pieceVersion;
    expect(pin).toMatch(/^\d+\.\d+\.\d+/);
    const detail = (await t.req("GET", "/api/pieces/data")).body.data;
    expect(detail.pieceVersion).toBe(pin);
    const summary = (await t.req("GET", "/api/pieces/data?view=summary")).body.data;
    expect(summary.pieceVersion).toBe(pin);
    const projection = (await t.req("GET", "/api/pieces/data/actions/set_fields")).body.data;
    expect(projection.pieceVersion).toBe(pin);
    const trigger = (await t.req("GET", "/api/pieces/webhook/triggers/catch_webhook")).body.data;
    expect(trigger.pieceVersion).toBe(created.definition.trigger.pieceVersion);
  });
});
