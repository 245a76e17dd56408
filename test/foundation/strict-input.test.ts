/**
 * Request bodies are taken as sent or refused: no type coercion ("10" for an integer, 10 for a string,
 * "true" for a boolean is a 400 naming the field), and text that is not well-formed Unicode (a lone
 * surrogate) is refused rather than stored altered. The walk covers every request body the OpenAPI
 * contract declares, so a new route is checked the day it is added.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { appSql } from "../support/app-sql";

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await testApp();
  doc = (await t.req("GET", "/api/openapi.json", { token: null })).body;
});

const UUID = "00000000-0000-4000-8000-000000000000";

function resolveRef(schema: any): any {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++)
    s = s.$ref
      .split("/")
      .slice(1)
      .reduce((node: any, key: string) => node?.[key], doc);
  return s;
}

/** The schema's own type when it is one primitive (string, integer, number, boolean), else undefined. */
function primitiveType(schema: any): string | undefined {
  const s = resolveRef(schema);
  if (!s) return undefined;
  if (typeof s.type === "string" && ["string", "integer", "number", "boolean"].includes(s.type) && !s.anyOf) return s.type;
  const variants = (s.anyOf ?? []).map(resolveRef).filter((v: any) => v?.type !== "null");
  if (!variants.length) return undefined;
  // A string "integer"/"numeric" beside a number is a coercing type: what it declares is the number.
  const numeric = variants.find((v: any) => v.type === "integer" || v.type === "number");
  if (numeric && variants.every((v: any) => v === numeric || (v.type === "string" && ["integer", "numeric"].includes(v.format)))) return numeric.type;
  const types = new Set(variants.map((v: any) => v.type));
  if (types.size === 1 && !variants.some((v: any) => v.anyOf || v.enum || v.const !== undefined)) {
    const [type] = types as Set<string>;
    return ["string", "integer", "number", "boolean"].includes(type) ? type : undefined;
  }
  return undefined;
}

/** A value the schema accepts, as plain as possible: enough to make every other field of a body valid. */
function validValue(schema: any, depth = 0): unknown {
  const s = resolveRef(schema);
  if (!s || depth > 6) return undefined;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const variants = s.anyOf ?? s.oneOf;
  if (Array.isArray(variants)) {
    const pick = variants.find((v: any) => resolveRef(v)?.type !== "null") ?? variants[0];
    return validValue(pick, depth + 1);
  }
  switch (s.type) {
    case "string":
      if (s.format === "uuid") return UUID;
      if (s.format === "date-time") return "2030-01-01T00:00:00.000Z";
      if (s.format === "uri") return "https://example.com/";
      if (s.format === "email") return "someone@example.com";
      return "x".repeat(Math.max(1, s.minLength ?? 1));
    case "integer":
    case "number":
      return Math.max(s.minimum ?? 1, 1);
    case "boolean":
      return true;
    case "array":
      return s.minItems ? Array.from({ length: s.minItems }, () => validValue(s.items, depth + 1)) : [];
    case "object": {
      const out: Record<string, unknown> = {};
      for (const name of s.required ?? []) out[name] = validValue(s.properties?.[name], depth + 1);
      return out;
    }
    default:
      return undefined;
  }
}

/** Every primitive property reachable through object properties (not through unions or arrays), with its path. */
function primitiveFields(schema: any, path: string[] = [], depth = 0): Array<{ path: string[]; type: string }> {
  const s = resolveRef(schema);
  if (!s || s.type !== "object" || !s.properties || depth > 4) return [];
  const out: Array<{ path: string[]; type: string }> = [];
  for (const [name, prop] of Object.entries<any>(s.properties)) {
    const type = primitiveType(prop);
    if (type) out.push({ path: [...path, name], type });
    else out.push(...primitiveFields(prop, [...path, name], depth + 1));
  }
  return out;
}

/** A body with every parent of `path` present (as valid as the schema allows) and the field set to `value`. */
function bodyWith(schema: any, path: string[], value: unknown): Record<string, unknown> {
  const body = (validValue(schema) ?? {}) as Record<string, unknown>;
  let node: any = body;
  let s = resolveRef(schema);
  for (const key of path.slice(0, -1)) {
    s = resolveRef(s.properties[key]);
    if (node[key] === undefined || node[key] === null || typeof node[key] !== "object") node[key] = validValue(s) ?? {};
    node = node[key];
  }
  node[path.at(-1)!] = value;
  return body;
}

const WRONG: Record<string, unknown> = { string: 10, integer: "10", number: "1.5", boolean: "true" };

async function counts(): Promise<Record<string, number>> {
  // Every table of the store, on SQLite or on the PostgreSQL pass.
  const sql = appSql(t);
  const tables = await sql.all<{ name: string }>(
    t.databaseUrl
      ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  );
  const counted: Record<string, number> = {};
  for (const { name } of tables) counted[name] = Number((await sql.get<{ n: number }>(`SELECT count(*) AS n FROM "${name}"`))!.n);
  return counted;
}

describe("no coercion of body types", () => {
  test('a workflow\'s settings.timeoutSeconds given as "10" is refused, naming the path, the type and what was sent', async () => {
    const res = await t.req("POST", "/api/workflows", {
      body: { name: "x", definition: { schemaVersion: 2, trigger: { name: "trigger", type: "manual", config: {} }, settings: { timeoutSeconds: "10" } } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_FAILED");
    expect(res.body.error.message).toContain("timeoutSeconds");
    expect(res.body.error.message).toContain("integer");
    expect(res.body.error.message).toContain('"10"');
    expect((await t.req("GET", "/api/workflows")).body.total).toBe(0);
  });

  test("every request body in the contract: each primitive field with a wrong-typed value is a 400 naming it, and nothing is stored", async () => {
    const before = await counts();
    const checked: string[] = [];
    const failures: string[] = [];
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        const schema = operation.requestBody?.content?.["application/json"]?.schema;
        if (!schema || !path.startsWith("/api/")) continue;
        const concrete = path.replace(/\{[^}]+\}/g, UUID);
        for (const field of primitiveFields(schema)) {
          const sent = WRONG[field.type];
          const res = await t.req(method.toUpperCase(), concrete, { body: bodyWith(schema, field.path, sent) });
          const name = `${method.toUpperCase()} ${path} ${field.path.join(".")} (${field.type} sent ${JSON.stringify(sent)})`;
          checked.push(name);
          const message = String(res.body?.error?.message ?? "");
          // Validate answers every fault as a diagnostic (200, valid: false) naming its path, never coerced.
          const diagnosed =
            path === "/api/workflows/validate" &&
            res.status === 200 &&
            res.body.data.valid === false &&
            res.body.data.errors.some((e: any) => e.path === field.path.join("."));
          if (diagnosed) continue;
          if (res.status !== 400 || res.body?.error?.code !== "VALIDATION_FAILED" || !message.includes(field.path.at(-1)!)) {
            failures.push(`${name}: ${res.status} ${message.slice(0, 160)}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // The walk reached the routes that take bodies (a contract without request bodies would check nothing).
    expect(checked.length).toBeGreaterThan(100);
    expect(checked.some((c) => c.includes("/api/workflows ") && c.includes("name"))).toBe(true);
    expect(await counts()).toEqual(before);
  }, 60_000);
});

describe("text is stored exactly or refused", () => {
  // JSON text written by hand: JSON.stringify would not let us send what a careless client sends.
  const raw = (path: string, json: string, token?: string | null) =>
    t.app.handle(
      new Request(`http://localhost${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token ?? "weft_test_root_token_0123456789"}` },
        body: json,
      }),
    );

  test("a lone surrogate in a workflow's name is a 400 naming the field; nothing is stored", async () => {
    const before = await counts();
    for (const name of ['"adv\\ud800x"', '"\\udc00"', '"tail\\uD83D"']) {
      const res = await raw("/api/workflows", `{"name": ${name}}`);
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error.code).toBe("VALIDATION_FAILED");
      expect(body.error.message).toContain("/name");
      expect(body.error.message).toContain("lone UTF-16 surrogate");
    }
    expect(await counts()).toEqual(before);
  });

  test("deep inside a definition, and in a key, the path is named", async () => {
    const def = `{"name":"ok","definition":{"schemaVersion":2,"trigger":{"name":"trigger","type":"manual","config":{},"nextAction":{"name":"s","type":"PIECE","pieceId":"data","actionId":"set_fields","config":{"fields":{"k\\udfffey":"v"}}}}}}`;
    const res = await raw("/api/workflows", def);
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain("/definition/trigger/nextAction/config/fields/k");
  });

  test("a webhook payload with a lone surrogate is refused before a run starts", async () => {
    const made = await t.req("POST", "/api/workflows", {
      body: {
        name: "hook",
        definition: { schemaVersion: 2, trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} } },
      },
    });
    await t.req("POST", `/api/workflows/${made.body.data.id}/publish`);
    const runsBefore = (await t.req("GET", "/api/runs")).body.pagination.total;
    const res = await t.app.handle(
      new Request(`http://localhost/webhook/${made.body.data.webhookToken}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"text":"a\\ud800"}',
      }),
    );
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain("/text");
    expect((await t.req("GET", "/api/runs")).body.pagination.total).toBe(runsBefore);
  });

  test("well-formed text — pairs written as escapes, emoji, NUL — is stored and read back exactly", async () => {
    const name = "pair \ud83d\ude00 emoji 😀 nul \u0000 end";
    const workflows = async () => (await t.req("GET", "/api/workflows")).body.total;
    const before = await workflows();
    const res = await raw("/api/workflows", `{"name": "pair \\ud83d\\ude00 emoji 😀 nul \\u0000 end"}`);
    if (t.databaseUrl) {
      // PostgreSQL's text cannot hold U+0000: refused, saying so, and nothing stored.
      expect(res.status).toBe(400);
      expect((await res.json()).error.message).toContain("U+0000");
      expect(await workflows()).toBe(before);
      const ok = await raw("/api/workflows", `{"name": "pair \\ud83d\\ude00 emoji 😀 end"}`);
      expect(ok.status).toBe(201);
      expect((await t.req("GET", `/api/workflows/${(await ok.json()).data.id}`)).body.data.name).toBe("pair 😀 emoji 😀 end");
      return;
    }
    expect(res.status).toBe(201);
    const id = (await res.json()).data.id;
    expect((await t.req("GET", `/api/workflows/${id}`)).body.data.name).toBe(name);
  });
});
