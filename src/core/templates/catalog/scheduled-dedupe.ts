import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000006",
  slug: "scheduled-dedupe",
  name: "Every 15 minutes → fetch list → handle each new item once",
  description: "Fetch a JSON list on a schedule and loop over it; the store remembers handled ids, so every item is handled exactly once",
  category: "polling",
  definition: base(
    {
      name: "trigger",
      displayName: "Every 15 minutes",
      type: "cron",
      pieceId: "schedule",
      actionId: "every",
      config: { interval: 15, unit: "minutes" },
      nextAction: {
        name: "fetch",
        displayName: "Fetch the list",
        type: "PIECE",
        pieceId: "http",
        actionId: "send_request",
        config: { method: "GET", url: "{{variables.listUrl}}", body_type: "none", auth_type: "none", response_type: "json" },
        nextAction: {
          name: "each",
          displayName: "For each item",
          type: "LOOP_ON_ITEMS",
          config: { items: "{{fetch.output.body.items}}" },
          firstLoopAction: {
            name: "seen",
            displayName: "Seen before?",
            type: "PIECE",
            pieceId: "store",
            actionId: "get",
            config: { key: '{{ "seen_" & each.item.id }}', default_value: false },
            nextAction: {
              name: "is_new",
              displayName: "New?",
              type: "ROUTER",
              branches: [
                {
                  name: "new",
                  conditions: [[{ field: "{{seen.output.found}}", operator: "boolean_false" }]],
                  firstAction: {
                    name: "mark_seen",
                    displayName: "Remember the id",
                    type: "PIECE",
                    pieceId: "store",
                    actionId: "put",
                    config: { key: '{{ "seen_" & each.item.id }}', value: true },
                    nextAction: {
                      name: "handle",
                      displayName: "Handle the item",
                      type: "PIECE",
                      pieceId: "store",
                      actionId: "append",
                      config: { key: "new_items", value: "{{each.item}}" },
                    },
                  },
                },
              ],
            },
          },
        },
      },
    },
    { variables: { listUrl: "https://example.com/api/items" }, settings: { concurrencyLimit: 1 } },
  ),
} satisfies BuiltinTemplate;
