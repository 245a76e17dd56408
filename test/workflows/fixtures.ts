/** Definitions the workflow tests share: the three examples and generated long chains. */
import greet from "../fixtures/examples/webhook-greet-respond.json" with { type: "json" };
import loop from "../fixtures/examples/loop-orders.json" with { type: "json" };
import stock from "../fixtures/examples/schedule-fetch-route.json" with { type: "json" };
import type { TestApp } from "../support/app";

const clone = <T>(v: T): T => structuredClone(v);

/** Webhook → data.set_fields → webhook.respond, exactly as the example has it. */
export function greetDefinition(): any {
  return clone(greet.definition) as any;
}

/** Manual → loop → text.template, then a skipped delay and data.set_fields. */
export function loopDefinition(): any {
  const d = clone(loop.definition) as any;
  d.trigger.nextAction.firstLoopAction.config = { template: "line {i}: {sku}", values: { i: "{{eachLine.index}}", sku: "{{eachLine.item.sku}}" } };
  return d;
}

/** Cron → http → router with an error branch; errorWorkflowId removed (it names no workflow here). */
export function stockDefinition(): any {
  const d = clone(stock.definition) as any;
  delete d.settings.errorWorkflowId;
  return d;
}

/** A manual trigger followed by `steps` data.set_fields steps, each reading the one before. */
export function chainDefinition(steps: number): any {
  const trigger: any = { name: "trigger", displayName: "Start", type: "manual", config: {} };
  let tail = trigger;
  for (let i = 1; i <= steps; i++) {
    const node = {
      name: `s${i}`,
      type: "PIECE",
      pieceId: "data",
      actionId: "set_fields",
      config: { fields: { n: i === 1 ? "{{trigger.body.n}}" : `{{s${i - 1}.output.n}}` } },
    };
    tail.nextAction = node;
    tail = node;
  }
  return { schemaVersion: 2, trigger, settings: {}, variables: {}, annotations: null, pinnedData: {} };
}

export async function createWorkflow(t: TestApp, body: Record<string, unknown> = {}, token?: string) {
  const res = await t.req("POST", "/api/workflows", { body: { name: "wf", ...body }, token });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body.data;
}
