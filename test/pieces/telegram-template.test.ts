/**
 * The zigbee-door-telegram template with Activepieces' Telegram bot piece. The package is packed with
 * `npm pack @activepieces/piece-telegram-bot` at test time and installed from that tarball through Weft's
 * own install (POST /api/pieces/packages with the .tgz, docs/activepieces.md), as an air-gapped user would;
 * its dependencies come from the npm registry. Both need the npm registry: without it that test is
 * skipped with one printed line. The published package (0.2.0) sends to https://api.telegram.org with no
 * base URL to change, so no message is sent here: the test checks that the template is refused until the
 * package is installed, that the package installs, that its step projects, and that the template then
 * passes the publish gate.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import template from "../../src/core/templates/catalog/zigbee-door-telegram";
import { type TestApp, testApp } from "../support/app";

const PACKAGE = "@activepieces/piece-telegram-bot";

/** The published package as a tarball, or null when the npm registry cannot be reached. */
async function packed(): Promise<string | null> {
  const dir = mkdtempSync(join(tmpdir(), "weft-telegram-"));
  const proc = Bun.spawn(["npm", "pack", PACKAGE, "--pack-destination", dir, "--silent"], { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(), 60_000);
  const code = await proc.exited;
  clearTimeout(timer);
  const file = readdirSync(dir).find((name) => name.endsWith(".tgz"));
  return code === 0 && file ? join(dir, file) : null;
}

let t: TestApp;
let tarball: string | null = null;
beforeAll(async () => {
  t = await testApp({});
  tarball = await packed();
  if (!tarball) console.log(`telegram template: install test skipped (the npm registry is unreachable to pack ${PACKAGE})`);
}, 90_000);
afterAll(() => t?.deps.piecePackages.stop());

/** Uses the template, puts connections on its steps, saves it, and answers the draft and the gate's verdict. */
async function useTemplate(connections: Record<string, string>) {
  const used = (await t.req("POST", `/api/templates/${template.id}/use`, { body: { name: `door ${crypto.randomUUID().slice(0, 4)}` } })).body.data;
  for (let node = used.definition.trigger; node; node = node.nextAction) if (connections[node.pieceId]) node.connectionId = connections[node.pieceId];
  const saved = await t.req("PUT", `/api/workflows/${used.id}`, { body: { definition: used.definition, expectedRev: used.rev } });
  const check = (await t.req("POST", `/api/workflows/validate?workflowId=${used.id}`, { body: used.definition })).body.data;
  return { id: used.id as string, saved, check };
}

describe("zigbee-door-telegram", () => {
  test("before the package is installed, the template names it and its Telegram step is refused by the gate", async () => {
    expect(template.packages).toEqual([PACKAGE]);
    expect(template.description).toContain(PACKAGE);
    const mqtt = (await t.req("POST", "/api/connections", { body: { pieceId: "mqtt", name: "broker", values: { url: "mqtt://broker.example.com:1883" } } }))
      .body.data.id;
    const { check } = await useTemplate({ mqtt });
    expect(check.errors.map((e: any) => [e.code, e.path])).toEqual([["UNKNOWN_PIECE", "trigger.nextAction.pieceId"]]);
  });

  test("installed from the packed tarball, the Telegram bot piece projects its step and the template passes the publish gate", async () => {
    if (!tarball) return;
    const installed = await t.req("POST", "/api/pieces/packages", { body: { package: tarball } });
    expect(installed.status).toBe(201);
    expect(installed.body.data).toMatchObject({ pieceId: "ap-telegram-bot", name: PACKAGE, source: "tarball", authKind: "SECRET_TEXT", unsupported: [] });
    const projection = (await t.req("GET", "/api/pieces/ap-telegram-bot/actions/send_text_message")).body.data;
    expect(projection).toMatchObject({ pieceId: "ap-telegram-bot", id: "send_text_message", sideEffects: "external" });
    expect(Object.keys(projection.inputSchema.properties)).toEqual(expect.arrayContaining(["chat_id", "message"]));
    expect(projection.inputSchema.required).toContain("chat_id");
    const telegram = await t.req("POST", "/api/connections", {
      body: { pieceId: "ap-telegram-bot", name: "my bot", apiKey: "123456:ABC-bot-token" },
    });
    expect(`${telegram.status} ${telegram.text}`).toStartWith("201");
    const mqtt = (await t.req("POST", "/api/connections", { body: { pieceId: "mqtt", name: "broker 2", values: { url: "mqtt://broker.example.com:1883" } } }))
      .body.data.id;
    const { id, saved, check } = await useTemplate({ mqtt, "ap-telegram-bot": telegram.body.data.id });
    expect(saved.status).toBe(200);
    expect(check.errors).toEqual([]);
    expect(check.warnings.filter((w: any) => ["UNKNOWN_PROPERTY", "INACTIVE_PROPERTY", "UNKNOWN_VARIABLE", "TYPE_MISMATCH"].includes(w.code))).toEqual([]);
    expect((await t.req("POST", `/api/workflows/${id}/publish`)).status).toBe(200);
    expect((await t.req("POST", `/api/workflows/${id}/unpublish`)).status).toBe(200);
  }, 90_000);
});
