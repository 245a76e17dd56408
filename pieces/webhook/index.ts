/** Webhook: start a run from an HTTP call to the workflow's public URL, and optionally reply synchronously. */
import { action, definePiece, Property, Show, trigger } from "../../src/pieces-sdk";

const METHODS = ["ANY", "GET", "POST", "PUT", "PATCH", "DELETE"];

export default definePiece({
  id: "webhook",
  name: "Webhook",
  version: "1.0.0",
  description: "Receive HTTP calls at the workflow's public URL and answer them",
  triggers: [
    trigger({
      id: "catch_webhook",
      name: "Catch webhook",
      description: "Runs the workflow for every call to {PUBLIC_URL}/webhook/{webhookToken}",
      type: "webhook",
      props: {
        method: Property.staticDropdown({ displayName: "Method", description: "Only calls with this method start a run", default: "ANY", options: METHODS }),
        reply: Property.staticDropdown({
          displayName: "Reply",
          description: "immediate: answer 200 at once; respond_action: wait for a Respond step (the run's result otherwise)",
          default: "immediate",
          options: [{ label: "Immediately", value: "immediate" }, { label: "With a Respond step", value: "respond_action" }],
        }),
      },
      sampleData: { method: "POST", headers: { "content-type": "application/json" }, query: {}, body: { hello: "world" } },
    }),
  ],
  actions: [
    action({
      id: "respond",
      name: "Respond to webhook",
      description: "Send the synchronous reply to the call that started this run",
      sideEffects: "write",
      props: {
        status: Property.integer({ displayName: "Status", default: 200, min: 100, max: 599 }),
        body_type: Property.staticDropdown({ displayName: "Body type", default: "json", options: ["json", "text", "none"] }),
        body_json: Property.json({ displayName: "Body", displayConditions: [Show.eq("body_type", "json")] }),
        body_text: Property.longText({ displayName: "Body", displayConditions: [Show.eq("body_type", "text")] }),
        headers: Property.keyValue({ displayName: "Headers" }),
      },
      outputSchema: { type: "object", properties: { status: { type: "integer" } } },
      sampleData: { status: 200 },
      run: (ctx) => {
        const { config } = ctx;
        const status = Number(config.status ?? 200);
        if (!Number.isInteger(status) || status < 100 || status > 599) throw new Error(`status ${config.status} is not an HTTP status; use 100–599`);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries((config.headers as Record<string, unknown>) ?? {})) headers[k.toLowerCase()] = String(v);
        const type = config.body_type ?? "json";
        let body: unknown = null;
        if (type === "json") {
          body = config.body_json ?? null;
          headers["content-type"] ??= "application/json";
        } else if (type === "text") {
          body = String(config.body_text ?? "");
          headers["content-type"] ??= "text/plain; charset=utf-8";
        } else if (type !== "none") throw new Error(`body_type "${type}" is unknown; use json, text or none`);
        ctx.respond({ status, headers, body });
        return { status };
      },
    }),
  ],
});
