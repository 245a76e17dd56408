/**
 * An agent-style script: it knows only the goal ("when called, POST the caller's body to URL") and learns
 * every field from the projection tools, then validates, publishes, runs with wait and reads the run.
 * Shared by the Streamable HTTP and the stdio tests.
 */
import { expect } from "bun:test";
import type { McpTestClient } from "./client";

/** Picks a value for a required property the way an agent would: the goal's values by meaning, else defaults. */
function fill(name: string, prop: any, goal: Record<string, unknown>): unknown {
  if (name in goal) return goal[name];
  if (prop.default !== undefined) return prop.default;
  if (prop.enum?.length) return prop.enum[0];
  if (prop.format === "uri") return goal.url;
  if (prop.type === "json" || prop.type === "object") return "{{trigger.body}}";
  throw new Error(`the agent does not know how to fill required property "${name}" (${JSON.stringify(prop)})`);
}

export async function buildAndRunWebhookToHttp(mcp: McpTestClient, targetUrl: string) {
  // 1. Discover: which piece catches webhooks, which sends HTTP requests.
  const webhook = (await mcp.call("get_piece_summary", { pieceId: "webhook" })).body.data;
  const catcher = webhook.triggers.find((t: any) => t.type === "webhook");
  expect(catcher).toBeDefined();
  const http = (await mcp.call("get_piece_summary", { pieceId: "http" })).body.data;
  const send = http.actions.find((a: any) => a.id === "send_request");
  expect(Object.keys(send.discriminators)).toEqual(expect.arrayContaining(["body_type", "auth_type"]));

  // 2. Learn the exact fields: the trigger's, and the action's narrowed to a JSON body without auth.
  const triggerSchema = (await mcp.call("get_trigger_schema", { pieceId: "webhook", triggerId: catcher.id })).body.data;
  const gates = { body_type: "json", auth_type: "none" };
  for (const [gate, value] of Object.entries(gates)) expect(send.discriminators[gate]).toContain(value);
  const projection = (await mcp.call("get_action_schema", { pieceId: "http", actionId: "send_request", values: gates })).body.data;
  expect(projection.filteredBy).toEqual(gates);
  expect(projection.unresolved).toEqual([]);
  expect(projection.inputSchema.properties.token).toBeUndefined(); // bearer-only field dropped

  const goal = { method: "POST", url: targetUrl, body_json: "{{trigger.body}}", ...gates };
  const triggerConfig: Record<string, unknown> = {};
  for (const name of triggerSchema.inputSchema.required) triggerConfig[name] = fill(name, triggerSchema.inputSchema.properties[name], goal);
  const actionConfig: Record<string, unknown> = { ...gates };
  for (const name of projection.inputSchema.required) actionConfig[name] = fill(name, projection.inputSchema.properties[name], goal);
  expect(actionConfig).toMatchObject({ method: "POST", url: targetUrl, body_json: "{{trigger.body}}" });

  const definition = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: catcher.type,
      pieceId: "webhook",
      actionId: catcher.id,
      config: triggerConfig,
      nextAction: { name: "forward", type: "PIECE", pieceId: "http", actionId: "send_request", config: actionConfig },
    },
  };

  // 3. Validate, create, publish.
  const diagnostics = await mcp.call("validate_workflow", { definition });
  expect(diagnostics.body.data).toMatchObject({ valid: true, errors: [] });
  const created = await mcp.call("create_workflow", { name: "Forward webhook", definition });
  expect(created.isError).toBe(false);
  const published = await mcp.call("publish_workflow", { id: created.body.data.id });
  expect(published.body.data.status).toBe("active");

  // 4. Run the live version and wait; read the run back.
  const ran = await mcp.call("run_workflow", { id: created.body.data.id, environment: "production", wait: 30, input: { name: "Ada" } });
  expect(ran.isError).toBe(false);
  expect(ran.body.data).toMatchObject({ status: "completed", triggerType: "mcp", environment: "production" });
  const run = (await mcp.call("get_run", { id: ran.body.data.id })).body.data;
  const step = run.steps.find((s: any) => s.nodeId === "forward");
  expect(step.status).toBe("completed");
  expect(step.outputData.status).toBe(200);
  expect(step.outputData.body).toEqual({ received: { name: "Ada" } });
  const listed = await mcp.call("list_runs", { triggerType: "mcp", workflowId: created.body.data.id });
  expect(listed.body.data.map((r: any) => r.id)).toEqual([run.id]);
  return { workflowId: created.body.data.id, run };
}

/** A loopback endpoint that echoes the JSON it receives. */
export function echoServer() {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => Response.json({ received: await request.json().catch(() => null) }),
  });
}
