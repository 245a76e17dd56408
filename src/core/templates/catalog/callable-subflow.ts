import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000008",
  slug: "callable-subflow",
  name: "Reusable sub-flow (callable)",
  description: "A workflow other workflows (and AI agents over MCP) call with an input and get an answer from",
  category: "sub-flows",
  definition: base({
    name: "trigger",
    displayName: "When called",
    type: "callable",
    pieceId: "subflows",
    actionId: "callable",
    config: { fields: [{ name: "text", type: "string", required: true, description: "Text to turn into a URL slug" }] },
    nextAction: {
      name: "lower",
      displayName: "Lower-case",
      type: "PIECE",
      pieceId: "text",
      actionId: "case",
      config: { text: "{{trigger.body.text}}", case: "lower" },
      nextAction: {
        name: "slug",
        displayName: "Dashes for spaces",
        type: "PIECE",
        pieceId: "text",
        actionId: "replace",
        config: { text: "{{lower.output.text}}", find: "[^a-z0-9]+", replace_with: "-", use_regex: true, flags: "g" },
        nextAction: {
          name: "answer",
          displayName: "Return the slug",
          type: "PIECE",
          pieceId: "subflows",
          actionId: "return_response",
          config: { value: { slug: "{{slug.output.text}}" } },
        },
      },
    },
  }),
} satisfies BuiltinTemplate;
