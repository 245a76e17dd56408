/** User pieces from WEFT_PIECES_DIR: the example docs/pieces.md shows, the other export forms, errors, the server and a compiled binary. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadPiecesDir, PieceLoadError } from "../../src/pieces-runtime/loader";
import { loadRegistry } from "../../src/pieces-runtime/registry";
import { testApp, type TestApp } from "../support/app";
import { startServer, type ServerHandle } from "../support/server";
import { fakeContext } from "./fake-context";

const ROOT = resolve(import.meta.dir, "../..");

/** The code block docs/pieces.md marks as the example piece — the test loads exactly what the docs show. */
function docsExample(): string {
  const docs = readFileSync(join(ROOT, "docs/pieces.md"), "utf8");
  const match = /<!-- example-piece: greetings\.ts -->\s*```ts\n([\s\S]*?)```/.exec(docs);
  if (!match) throw new Error("docs/pieces.md has no example-piece block");
  return match[1];
}

const FACTORY = `export default (sdk) => sdk.definePiece({
  id: "factory_piece", name: "Factory", version: "0.1.0", description: "made by a factory",
  actions: [sdk.action({ id: "ping", name: "Ping", description: "", sideEffects: "pure", props: { n: sdk.Property.number({ required: true }) }, run: (ctx) => ({ pong: ctx.config.n }) })],
});
`;

const PLAIN = `export default {
  id: "plain-piece", name: "Plain", version: "3.0.0", description: "a plain object",
  actions: { echo: { id: "echo", name: "Echo", description: "", sideEffects: "pure",
    props: { kind: { type: "string", enum: ["a", "b"] }, extra: { type: "string", required: true, displayConditions: [{ field: "kind", operator: "eq", value: "b" }] } },
    run: (ctx) => ctx.config } },
  triggers: {},
};
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "weft-pieces-"));
  writeFileSync(join(dir, "greetings.ts"), docsExample());
  writeFileSync(join(dir, "factory.js"), FACTORY);
  mkdirSync(join(dir, "plain"));
  writeFileSync(join(dir, "plain", "index.mjs"), PLAIN);
  writeFileSync(join(dir, "notes.md"), "not a piece");
  writeFileSync(join(dir, "types.d.ts"), "export {};");
});

describe("loading WEFT_PIECES_DIR", () => {
  test("the docs example, a factory and a plain object all load beside the built-ins", async () => {
    const registry = await loadRegistry({ piecesDir: dir });
    expect(registry.ids()).toEqual(expect.arrayContaining(["greetings", "factory_piece", "plain-piece", "http", "data"]));
    expect(registry.servedVersion("greetings")).toBe("1.2.0");
    expect(registry.trigger("greetings", "greeting_requested")?.type).toBe("webhook");
    expect(await registry.action("factory_piece", "ping")!.run(fakeContext({ n: 5 }))).toEqual({ pong: 5 });
  });

  test("the docs example runs as documented", async () => {
    const registry = await loadRegistry({ piecesDir: dir });
    const greet = registry.action("greetings", "greet")!;
    expect(await greet.run(fakeContext({ name: "Ada", style: "casual", emoji: true }))).toEqual({ text: "Hello, Ada 👋" });
    expect(await greet.run(fakeContext({ name: "Lovelace", style: "formal", title: "Countess", language: "de" }))).toEqual({
      text: "Hallo, Countess Lovelace",
    });
  });

  test("a broken piece stops loading with its file and the reason", async () => {
    const bad = mkdtempSync(join(tmpdir(), "weft-bad-pieces-"));
    writeFileSync(join(bad, "nothing.ts"), "export const x = 1;");
    await expect(loadPiecesDir(bad)).rejects.toThrow(PieceLoadError);
    await expect(loadPiecesDir(bad)).rejects.toThrow(`${join(bad, "nothing.ts")}: the default export must be a piece`);

    const invalid = mkdtempSync(join(tmpdir(), "weft-bad-pieces-"));
    writeFileSync(join(invalid, "v.js"), 'export default { id: "v", name: "V", version: "one", actions: [] };');
    await expect(loadPiecesDir(invalid)).rejects.toThrow('version "one" is not semver');

    const syntax = mkdtempSync(join(tmpdir(), "weft-bad-pieces-"));
    writeFileSync(join(syntax, "s.ts"), "export default {{;");
    await expect(loadPiecesDir(syntax)).rejects.toThrow("could not be loaded");

    const twice = mkdtempSync(join(tmpdir(), "weft-bad-pieces-"));
    writeFileSync(join(twice, "a.js"), FACTORY);
    writeFileSync(join(twice, "b.js"), FACTORY);
    await expect(loadPiecesDir(twice)).rejects.toThrow('piece id "factory_piece" is already declared');

    await expect(loadPiecesDir(join(bad, "missing"))).rejects.toThrow("is not a directory");
  });
});

describe("user pieces through the API", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
    for (const piece of await loadPiecesDir(dir)) t.deps.pieces.register(piece);
  });

  test("projection narrows the docs example by its style gate", async () => {
    const formal = (await t.req("GET", "/api/pieces/greetings/actions/greet?style=formal")).body.data;
    expect(formal.pieceVersion).toBe("1.2.0");
    expect(Object.keys(formal.inputSchema.properties)).toEqual(["name", "style", "title", "language"]);
    expect(formal.inputSchema.required).toEqual(["name", "style", "title"]);
    expect(formal.dynamicFields).toEqual(["language"]);
    const summary = (await t.req("GET", "/api/pieces/greetings?view=summary")).body.data;
    expect(summary.actions[0].discriminators).toEqual({ style: ["casual", "formal"] });
  });

  test("options come from the example's dropdown, refreshed by style", async () => {
    const res = await t.req("POST", "/api/pieces/greetings/actions/greet/options/language", { body: { config: { style: "formal" } } });
    expect(res.body.data.options.map((o: any) => o.value)).toEqual(["en", "de"]);
  });

  test("a plain-object piece answers like any other", async () => {
    const p = (await t.req("GET", "/api/pieces/plain-piece/actions/echo?kind=a")).body.data;
    expect(Object.keys(p.inputSchema.properties)).toEqual(["kind"]);
  });
});

describe("the server loads WEFT_PIECES_DIR at start", () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer({ env: { WEFT_PIECES_DIR: dir, WEFT_LOG_LEVEL: "warn" } });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
  });

  test("GET /api/pieces/greetings", async () => {
    const res = await server.fetch("/api/pieces/greetings");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.data.version).toBe("1.2.0");
    expect(body.data.actions.map((a: any) => a.id)).toEqual(["greet"]);
  });

  test("a broken WEFT_PIECES_DIR stops start-up with a message", async () => {
    const bad = mkdtempSync(join(tmpdir(), "weft-bad-pieces-"));
    writeFileSync(join(bad, "nothing.ts"), "export const x = 1;");
    const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve"], {
      env: { ...process.env, WEFT_PIECES_DIR: bad, WEFT_PORT: "0", WEFT_DATA_DIR: mkdtempSync(join(tmpdir(), "weft-data-")) },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toContain("nothing.ts: the default export must be a piece");
  }, 30_000);
});

describe("in a compiled binary", () => {
  test('user pieces load, including `import from "weft/sdk"`', () => {
    const out = mkdtempSync(join(tmpdir(), "weft-bin-pieces-"));
    const binary = join(out, "load-pieces");
    const build = Bun.spawnSync([process.execPath, "build", "--compile", join(import.meta.dir, "support/load-pieces-entry.ts"), "--outfile", binary], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(build.exitCode, build.stderr.toString()).toBe(0);
    // Run from an empty folder so nothing can resolve from the source tree.
    const run = Bun.spawnSync([binary, dir], { cwd: out, stdout: "pipe", stderr: "pipe" });
    expect(run.exitCode, run.stderr.toString()).toBe(0);
    const result = JSON.parse(run.stdout.toString());
    expect(result.ids).toEqual(expect.arrayContaining(["greetings", "factory_piece", "plain-piece", "http"]));
    expect(result.version).toBe("1.2.0");
    expect(result.output).toEqual({ text: "Hallo, Dr. Ada" });
  }, 60_000);
});
