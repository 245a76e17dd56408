import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000001",
  slug: "webhook-transform-respond",
  name: "Webhook → transform → respond",
  description: "Answer an HTTP call synchronously with a value computed from its body",
  category: "webhooks",
  definition: base(
    {
      name: "trigger",
      displayName: "Incoming call",
      type: "webhook",
      pieceId: "webhook",
      actionId: "catch_webhook",
      config: { method: "POST", reply: "respond_action" },
      nextAction: {
        name: "greet",
        displayName: "Build the answer",
        type: "PIECE",
        pieceId: "data",
        actionId: "set_fields",
        config: { fields: { name: "{{trigger.body.name}}", greeting: '{{ "hello " & trigger.body.name }}', receivedAt: "{{ $now() }}" } },
        nextAction: {
          name: "reply",
          displayName: "Reply",
          type: "PIECE",
          pieceId: "webhook",
          actionId: "respond",
          config: { status: 200, body: "{{greet.output}}" },
        },
      },
    },
    { settings: { timeoutSeconds: 30 } },
  ),
} satisfies BuiltinTemplate;
