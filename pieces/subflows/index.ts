/** Sub-flows: make a workflow callable, call it from another one (waiting or not), and return a value. */
import { action, definePiece, Property, trigger } from "../../src/pieces-sdk";

const FIELD_TYPES = ["string", "number", "integer", "boolean", "object", "array"];
const EXAMPLES: Record<string, unknown> = { string: "text", number: 1.5, integer: 1, boolean: true, object: {}, array: [] };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface InputField {
  name: string;
  type: string;
  required?: boolean;
  description?: string;
}

/** The callable's declared input fields, checked. */
export function inputFields(config: Record<string, unknown>): InputField[] {
  const raw = config.fields ?? [];
  if (!Array.isArray(raw)) throw new Error("fields must be a list of {name, type, required}");
  return raw.map((f: unknown, i) => {
    if (!f || typeof f !== "object") throw new Error(`fields[${i}] needs a name`);
    const field = f as Record<string, unknown>;
    if (typeof field.name !== "string" || !field.name) throw new Error(`fields[${i}] needs a name`);
    const type = String(field.type ?? "string");
    if (!FIELD_TYPES.includes(type)) throw new Error(`fields[${i}] ("${field.name}") has type "${type}"; use one of ${FIELD_TYPES.join(", ")}`);
    return { ...(f as InputField), type };
  });
}

/** Checks a caller's payload against the declared fields; returns the problems (empty when it fits). */
export function checkPayload(config: Record<string, unknown>, payload: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const field of inputFields(config)) {
    const value = payload[field.name];
    if (value === undefined || value === null) {
      if (field.required) problems.push(`"${field.name}" is required`);
      continue;
    }
    const actual = Array.isArray(value) ? "array" : typeof value;
    const ok = field.type === "integer" ? Number.isInteger(value) : field.type === actual;
    if (!ok) problems.push(`"${field.name}" must be ${field.type}, got ${actual}`);
  }
  return problems;
}

export default definePiece({
  id: "subflows",
  name: "Sub-flows",
  version: "1.0.0",
  icon: "🧩",
  description: "Call workflows from workflows",
  triggers: [
    trigger({
      id: "callable",
      name: "When called",
      description: "Starts when another workflow's Call workflow step (or the API/MCP) calls this one; the input is at trigger.body",
      type: "callable",
      props: {
        fields: Property.array({
          displayName: "Input fields",
          description: "The payload this workflow expects",
          items: {
            type: "object",
            properties: {
              name: { type: "string", required: true },
              type: { type: "string", enum: FIELD_TYPES, default: "string" },
              required: { type: "boolean", default: false },
              description: { type: "string" },
            },
          },
        }),
      },
      sampleData: { body: { name: "text" }, headers: {}, query: {} },
      sample: (config) => {
        const body: Record<string, unknown> = {};
        for (const field of inputFields(config)) body[field.name] = EXAMPLES[field.type];
        return { body, headers: {}, query: {} };
      },
    }),
  ],
  actions: [
    action({
      id: "call_workflow",
      name: "Call workflow",
      description: "Start another workflow as a sub-flow; with wait, continue with its returned response",
      sideEffects: "external",
      props: {
        workflow_id: Property.shortText({ displayName: "Workflow id", required: true, format: "uuid" }),
        payload: Property.json({ displayName: "Payload", description: "Object passed as the sub-flow's trigger.body", default: {} }),
        wait: Property.checkbox({ displayName: "Wait for the result", default: true }),
      },
      outputSchema: { type: "object", properties: { runId: { type: "string", format: "uuid" }, status: { type: "string" }, response: { type: "json" } } },
      sampleData: { runId: "00000000-0000-4000-8000-000000000000", status: "completed", response: { ok: true } },
      run: async (ctx) => {
        const workflowId = String(ctx.config.workflow_id ?? "");
        if (!UUID.test(workflowId)) throw new Error(`workflow_id "${workflowId}" is not a workflow id (uuid)`);
        const payload = ctx.config.payload ?? {};
        if (typeof payload !== "object" || Array.isArray(payload) || payload === null) throw new Error("payload must be an object");
        const result = await ctx.callWorkflow({ workflowId, payload: payload as Record<string, unknown>, wait: ctx.config.wait !== false });
        return { runId: result.runId, status: result.status, response: result.response ?? null };
      },
    }),
    action({
      id: "return_response",
      name: "Return response",
      description: "Set the value this callable workflow returns to its caller",
      sideEffects: "write",
      props: { value: Property.json({ displayName: "Value", required: true }) },
      outputSchema: { type: "object", properties: { value: { type: "json" } } },
      sampleData: { value: { ok: true } },
      run: (ctx) => {
        ctx.returnResponse(ctx.config.value ?? null);
        return { value: ctx.config.value ?? null };
      },
    }),
  ],
});
