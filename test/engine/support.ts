/**
 * Helpers for engine and runs tests: a test app with extra in-process pieces, workflows from a step
 * chain, and "run and wait" through the public API.
 */
import { action, definePiece } from "../../src/pieces-sdk";
import type { ActionDef } from "../../src/pieces-sdk/types";
import type { Clock } from "../../src/lib/clock";
import { testApp, type TestApp } from "../support/app";

export type Node = Record<string, unknown>;

/** A piece registered only in this process (so its steps run on the main thread, like pure ones). */
export function testPiece(id: string, actions: Array<Partial<ActionDef> & { id: string; run: ActionDef["run"] }>) {
  return definePiece({
    id,
    name: id,
    version: "1.0.0",
    description: "test piece",
    actions: actions.map((a) => action({ name: a.id, description: a.id, sideEffects: "pure", props: {}, ...a } as any)),
  });
}

/** A chain of nodes: each becomes the previous one's nextAction. */
export function chain(...nodes: Node[]): Node | undefined {
  for (let i = nodes.length - 2; i >= 0; i--) nodes[i] = { ...nodes[i], nextAction: nodes[i + 1] };
  return nodes[0];
}

export function definition(first: Node | undefined, extra: Record<string, unknown> = {}) {
  return {
    schemaVersion: 2,
    trigger: { name: "trigger", type: "manual", config: {}, ...(first ? { nextAction: first } : {}) },
    settings: {},
    variables: {},
    annotations: null,
    pinnedData: {},
    ...extra,
  };
}

export const set = (name: string, fields: Record<string, unknown>, extra: Node = {}): Node => ({
  name,
  type: "PIECE",
  pieceId: "data",
  actionId: "set_fields",
  config: { fields },
  ...extra,
});
export const template = (name: string, text: string, extra: Node = {}): Node => ({
  name,
  type: "PIECE",
  pieceId: "text",
  actionId: "template",
  config: { template: text },
  ...extra,
});
/** An http.send_request GET of `url` (3 s time limit), named "call" unless told. */
export const httpGet = (url: string, name = "call"): Node => ({
  name,
  type: "PIECE",
  pieceId: "http",
  actionId: "send_request",
  config: { method: "GET", url, timeout_ms: 3000 },
});

const apps: TestApp[] = [];

/** A fresh app; call `afterAll(stopEngines)` at the top of the test file to stop their engines. */
export async function engineApp(env: Record<string, string> = {}, options: { clock?: Clock } = {}): Promise<TestApp> {
  const t = await testApp(env, options);
  apps.push(t);
  return t;
}

export async function stopEngines() {
  await Promise.all(apps.splice(0).map((t) => t.deps.engine.stop(100)));
}

export async function createWorkflow(t: TestApp, def: unknown, options: { name?: string; publish?: boolean; token?: string } = {}): Promise<string> {
  const res = await t.req("POST", "/api/workflows", { body: { name: options.name ?? "wf", definition: def }, token: options.token });
  if (res.status !== 201) throw new Error(`create failed: ${res.text}`);
  if (options.publish) {
    const published = await t.req("POST", `/api/workflows/${res.body.data.id}/publish`, { token: options.token });
    if (published.status !== 200) throw new Error(`publish failed: ${published.text}`);
  }
  return res.body.data.id;
}

/** POST /run with wait and return the finished run (with steps). */
export async function runAndWait(t: TestApp, workflowId: string, body: unknown = {}, environment = "test", wait = 10): Promise<any> {
  const res = await t.req("POST", `/api/workflows/${workflowId}/run?environment=${environment}&wait=${wait}`, { body });
  if (res.status !== 200 && res.status !== 202) throw new Error(`run failed: ${res.status} ${res.text}`);
  return res.body.data;
}

export const stepOf = (run: any, name: string) => run.steps.find((s: any) => s.nodeId === name);

export async function until<T>(probe: () => T | Promise<T>, ok: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)?.slice(0, 500)}`);
    await Bun.sleep(20);
  }
}
