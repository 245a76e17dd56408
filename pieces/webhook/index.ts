/** Webhook: start a run from an HTTP call to the workflow's public URL, and optionally reply synchronously. */
import { action, definePiece, labelled, Property, trigger } from "../../src/pieces-sdk";

const METHODS = ["ANY", "GET", "POST", "PUT", "PATCH", "DELETE"];

export default definePiece({
  id: "webhook",
  name: "Webhook",
  version: "1.0.0",
  icon: "🪝",
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
          // Matches src/core/triggers/webhook-intake.ts: a Respond step anywhere in the workflow makes the call wait for it.
          description:
            "immediate: answer 202 with the run id at once, unless the workflow has a Respond step, whose reply the call then waits for; respond_action: always wait (the Respond step's reply, or the run id and status when the run ends without one)",
          default: "immediate",
          options: labelled({ immediate: "Immediately", respond_action: "With a Respond step" }),
        }),
      },
      sampleData: { method: "POST", headers: { "content-type": "application/json" }, query: {}, body: { hello: "world" } },
    }),
  ],
  actions: [
    action({
      id: "respond",
      name: "Respond to webhook",
      description:
        "Send the synchronous reply to the call that started this run: status, headers and body. A body that is text is sent as is (text/plain unless a content-type header says otherwise; text that happens to be JSON stays text); any other JSON value is sent as JSON; no body sends an empty reply",
      sideEffects: "write",
      props: {
        status: Property.integer({ displayName: "Status", description: "HTTP status, 100–599", default: 200, min: 100, max: 599 }),
        headers: Property.keyValue({ displayName: "Headers", description: "Reply headers, name → value; a content-type given here wins" }),
        body: Property.json({ displayName: "Body", description: "Any JSON value (sent as JSON) or text (sent as is), e.g. {{greet.output}}" }),
      },
      outputSchema: { type: "object", properties: { status: { type: "integer" } } },
      sampleData: { status: 200 },
      run: (ctx) => {
        const { config } = ctx;
        const status = Number(config.status ?? 200);
        if (!Number.isInteger(status) || status < 100 || status > 599)
          throw new Error(`status ${JSON.stringify(config.status)} is not an HTTP status; use a whole number 100–599`);
        const given = config.headers ?? {};
        if (typeof given !== "object" || Array.isArray(given)) throw new Error('headers must be an object of name → value, e.g. {"x-request-id": "42"}');
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(given as Record<string, unknown>)) headers[k.toLowerCase()] = typeof v === "string" ? v : JSON.stringify(v);
        // Text is never parsed: what the user typed (or an expression produced) is what the caller gets.
        const body = config.body ?? null;
        if (typeof body === "string") headers["content-type"] ??= "text/plain; charset=utf-8";
        else if (body !== null) headers["content-type"] ??= "application/json";
        ctx.respond({ status, headers, body });
        return { status };
      },
    }),
  ],
});
