/** Store: a key-value store shared by the workspace's workflows (counters, cursors, small lists). */
import { action, definePiece, Property } from "../../src/pieces-sdk";

const key = () => Property.shortText({ displayName: "Key", required: true, maxLength: 256 });

export default definePiece({
  id: "store",
  name: "Store",
  version: "1.0.0",
  icon: "📦",
  description: "Keep values between runs in a workspace key-value store",
  actions: [
    action({
      id: "get",
      name: "Get value",
      description: "Read the value at a key (the default when absent)",
      sideEffects: "read",
      props: { key: key(), default_value: Property.json({ displayName: "Default", description: "Returned when the key has no value" }) },
      outputSchema: { type: "object", properties: { key: { type: "string" }, found: { type: "boolean" }, value: { type: "json" } } },
      sampleData: { key: "last_order_id", found: true, value: 1042 },
      run: async (ctx) => {
        const k = String(ctx.config.key ?? "");
        const value = await ctx.store.get(k);
        return { key: k, found: value !== undefined, value: value === undefined ? (ctx.config.default_value ?? null) : value };
      },
    }),
    action({
      id: "put",
      name: "Put value",
      description: "Set the value at a key (replacing any value)",
      sideEffects: "write",
      props: { key: key(), value: Property.json({ displayName: "Value", required: true }) },
      outputSchema: { type: "object", properties: { key: { type: "string" }, value: { type: "json" } } },
      sampleData: { key: "last_order_id", value: 1043 },
      run: async (ctx) => {
        const k = String(ctx.config.key ?? "");
        await ctx.store.put(k, ctx.config.value ?? null);
        return { key: k, value: ctx.config.value ?? null };
      },
    }),
    action({
      id: "delete",
      name: "Delete value",
      description: "Remove a key",
      sideEffects: "write",
      props: { key: key() },
      outputSchema: { type: "object", properties: { key: { type: "string" }, deleted: { type: "boolean" } } },
      sampleData: { key: "last_order_id", deleted: true },
      run: async (ctx) => {
        const k = String(ctx.config.key ?? "");
        return { key: k, deleted: await ctx.store.delete(k) };
      },
    }),
    action({
      id: "append",
      name: "Append to list",
      description: "Append a value to the list at a key (creating it)",
      sideEffects: "write",
      props: { key: key(), value: Property.json({ displayName: "Value", required: true }) },
      outputSchema: { type: "object", properties: { key: { type: "string" }, length: { type: "integer" } } },
      sampleData: { key: "seen_ids", length: 3 },
      run: async (ctx) => {
        const k = String(ctx.config.key ?? "");
        return { key: k, length: await ctx.store.append(k, ctx.config.value ?? null) };
      },
    }),
  ],
});
