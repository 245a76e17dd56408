import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000009",
  slug: "order-lines-loop",
  name: "Loop over order lines",
  description: "Confirm each line of an order posted to the API, then total the quantities",
  category: "data",
  definition: base({
    name: "trigger",
    displayName: "Run from the API",
    type: "manual",
    config: {},
    nextAction: {
      name: "eachLine",
      displayName: "For each line",
      type: "LOOP_ON_ITEMS",
      config: { items: "{{trigger.body.lines}}" },
      firstLoopAction: {
        name: "confirm",
        displayName: "Confirm line",
        type: "PIECE",
        pieceId: "text",
        actionId: "template",
        config: { template: "line {i}: {sku} x {qty}", values: { i: "{{eachLine.index}}", sku: "{{eachLine.item.sku}}", qty: "{{eachLine.item.qty}}" } },
      },
      nextAction: {
        name: "total",
        displayName: "Sum quantities",
        type: "PIECE",
        pieceId: "data",
        actionId: "set_fields",
        config: { fields: { units: "{{ $sum(trigger.body.lines.qty) }}", lines: "{{ $count(trigger.body.lines) }}" } },
      },
    },
  }),
} satisfies BuiltinTemplate;
