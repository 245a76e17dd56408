import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000004",
  slug: "approval-flow",
  name: "Approval flow",
  description: "Pause a request until a person opens the approve or reject link, then record the decision",
  category: "approvals",
  definition: base({
    name: "trigger",
    displayName: "Request from the API",
    type: "manual",
    config: {},
    nextAction: {
      name: "approve",
      displayName: "Wait for approval",
      type: "PIECE",
      pieceId: "approval",
      actionId: "wait_for_approval",
      config: { message: '{{ "Approve spending " & trigger.body.amount & " for " & trigger.body.purpose & "?" }}', expires_in_hours: 48 },
      nextAction: {
        name: "decision",
        displayName: "Approved?",
        type: "ROUTER",
        branches: [
          {
            name: "approved",
            conditions: [[{ field: "{{approve.output.approved}}", operator: "boolean_true" }]],
            firstAction: {
              name: "record_approval",
              displayName: "Record approval",
              type: "PIECE",
              pieceId: "store",
              actionId: "append",
              config: {
                key: "approved_requests",
                value: { purpose: "{{trigger.body.purpose}}", amount: "{{trigger.body.amount}}", decidedAt: "{{approve.output.decidedAt}}" },
              },
            },
          },
          {
            name: "rejected_or_expired",
            conditions: [],
            firstAction: {
              name: "tag_rejected",
              displayName: "Tag rejected",
              type: "PIECE",
              pieceId: "tags",
              actionId: "add_tags",
              config: { tags: ["{{approve.output.decision}}"] },
            },
          },
        ],
      },
    },
  }),
} satisfies BuiltinTemplate;
