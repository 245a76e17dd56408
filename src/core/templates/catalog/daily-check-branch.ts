import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000002",
  slug: "daily-check-branch",
  name: "Daily schedule → HTTP check → branch",
  description: "Every morning, read a status endpoint and tag the run healthy or degraded; failures are remembered in the store",
  category: "schedules",
  definition: base(
    {
      name: "trigger",
      displayName: "Every day at 08:00",
      type: "cron",
      pieceId: "schedule",
      actionId: "cron",
      config: { expression: "0 8 * * *", timezone: "UTC" },
      nextAction: {
        name: "check",
        displayName: "Read status",
        type: "PIECE",
        pieceId: "http",
        actionId: "send_request",
        config: { method: "GET", url: "{{variables.statusUrl}}", body_type: "none", auth_type: "none" },
        onErrorAction: {
          name: "remember_failure",
          displayName: "Remember the failure",
          type: "PIECE",
          pieceId: "store",
          actionId: "put",
          config: { key: "status_check_last_error", value: "{{check.error.message}}" },
        },
        nextAction: {
          name: "route",
          displayName: "Healthy?",
          type: "ROUTER",
          branches: [
            {
              name: "healthy",
              conditions: [
                [
                  { field: "{{check.output.status}}", operator: "number_lt", value: 300 },
                  { field: "{{check.output.body.status}}", operator: "text_eq", value: "ok" },
                ],
              ],
              firstAction: {
                name: "tag_healthy",
                displayName: "Tag healthy",
                type: "PIECE",
                pieceId: "tags",
                actionId: "add_tags",
                config: { tags: ["healthy"] },
              },
            },
            {
              name: "otherwise",
              conditions: [],
              firstAction: {
                name: "tag_degraded",
                displayName: "Tag degraded",
                type: "PIECE",
                pieceId: "tags",
                actionId: "add_tags",
                config: { tags: ["degraded"] },
              },
            },
          ],
        },
      },
    },
    { variables: { statusUrl: "https://status.example.com/api/status.json" } },
  ),
} satisfies BuiltinTemplate;
