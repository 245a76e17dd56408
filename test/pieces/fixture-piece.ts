/** A piece exercising every narrowing rule: eq/neq, boolean and number gates, contains_any, exists, nesting, dynamic options. */
import { action, definePiece, Property, Show, trigger } from "../../src/pieces-sdk";

export const fixturePiece = () =>
  definePiece({
    id: "fixture",
    name: "Fixture",
    version: "2.3.1",
    description: "Test piece",
    actions: [
      action({
        id: "gated",
        name: "Gated",
        description: "Every kind of gate",
        sideEffects: "pure",
        props: {
          mode: Property.staticDropdown({ required: true, options: ["a", "b", "c"] }),
          a_field: Property.shortText({ required: true, displayConditions: [Show.eq("mode", "a")] }),
          b_field: Property.number({ required: true, displayConditions: [Show.neq("mode", "a")] }),
          enabled: Property.checkbox({ default: false }),
          when_enabled: Property.shortText({ required: true, displayConditions: [Show.eq("enabled", true)] }),
          count: Property.integer({ min: 0 }),
          many: Property.shortText({ displayConditions: [Show.eq("count", 3)] }),
          events: Property.staticMultiSelect({ options: ["push", "issues", "release"] }),
          hook_secret: Property.shortText({ required: true, displayConditions: [Show.containsAny("events", ["push", "issues"])] }),
          region: Property.shortText({}),
          region_note: Property.shortText({ required: true, displayConditions: [Show.exists("region")] }),
          nested: Property.object({
            properties: {
              inner: { type: "string", required: true, displayConditions: [{ field: "mode", operator: "eq", value: "z" }] },
            },
          }),
          list: Property.array({
            items: { type: "object", properties: { x: { type: "string", displayConditions: [{ field: "mode", operator: "eq", value: "z" }] } } },
          }),
          plain: Property.shortText({ required: true }),
          dyn: Property.dropdown({
            refreshers: ["mode"],
            options: async ({ config }) => {
              if (config.fail) throw new Error("the upstream said no");
              if (config.malformed) return { nope: true } as any;
              if (config.slow) return new Promise(() => {});
              return { options: [{ label: `mode ${config.mode}`, value: config.mode }], placeholder: "Pick one" };
            },
          }),
        },
        outputSchema: { type: "object", properties: { ok: { type: "boolean", required: true }, note: { type: "string" } } },
        sampleData: { ok: true },
        run: () => ({ ok: true }),
      }),
      action({ id: "other", name: "Other", description: "", sideEffects: "read", run: () => ({}) }),
    ],
    triggers: [
      trigger({
        id: "tick",
        name: "Tick",
        description: "A trigger with a gate",
        type: "poll",
        props: {
          source: Property.staticDropdown({ required: true, options: ["url", "file"] }),
          url: Property.shortText({ required: true, displayConditions: [Show.eq("source", "url")] }),
          path: Property.shortText({ required: true, displayConditions: [Show.eq("source", "file")] }),
        },
        sampleData: { n: 1 },
        poll: async () => [],
        dedupe: { strategy: "id", key: (item) => item.id },
      }),
      trigger({ id: "hook", name: "Hook", description: "", type: "webhook" }),
    ],
  });
