import { aRunFailed, base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000003",
  slug: "error-notification",
  name: "Error notification",
  description:
    "An error workflow: when a run fails, post a readable message to a chat or incident webhook. Name it in other workflows' settings.errorWorkflowId",
  category: "errors",
  definition: base(
    aRunFailed({
      name: "message",
      displayName: "Write the message",
      type: "PIECE",
      pieceId: "text",
      actionId: "template",
      config: {
        template: 'Workflow "{name}" failed ({status}) after {ms} ms: {error}',
        values: {
          name: "{{trigger.run.workflowName}}",
          status: "{{trigger.run.status}}",
          ms: "{{trigger.run.durationMs}}",
          error: "{{trigger.run.errorMessage}}",
        },
      },
      nextAction: {
        name: "notify",
        displayName: "Post to the webhook",
        type: "PIECE",
        pieceId: "http",
        actionId: "send_request",
        config: {
          method: "POST",
          url: "{{variables.notifyUrl}}",
          body_type: "json",
          body_json: { text: "{{message.output.text}}", runId: "{{trigger.run.id}}" },
          auth_type: "none",
        },
      },
    }),
    { variables: { notifyUrl: "https://hooks.example.com/incidents" } },
  ),
} satisfies BuiltinTemplate;
