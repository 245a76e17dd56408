/** Store: a key-value store shared by the workspace's workflows (counters, cursors, small lists). */
import { action, type ActionContext, definePiece, Property, type PropertyDef, type SideEffects } from "../../src/pieces-sdk";

/** An action on the value at one key: the key comes first in its props and in its output, and `run` is handed it. */
function keyAction(def: {
  id: string;
  name: string;
  description: string;
  sideEffects: SideEffects;
  /** The props after `key`. */
  props?: Record<string, PropertyDef>;
  /** The output's fields after `key`. */
  output: Record<string, PropertyDef>;
  sampleData: Record<string, unknown>;
  run: (ctx: ActionContext, key: string) => Promise<Record<string, unknown>>;
}) {
  const { id, name, description, sideEffects, props, output, sampleData, run } = def;
  return action({
    id,
    name,
    description,
    sideEffects,
    props: { key: Property.shortText({ displayName: "Key", required: true, maxLength: 256 }), ...props },
    outputSchema: { type: "object", properties: { key: { type: "string" }, ...output } },
    sampleData,
    run: async (ctx) => {
      const key = String(ctx.config.key ?? "");
      return { key, ...(await run(ctx, key)) };
    },
  });
}

export default definePiece({
  id: "store",
  name: "Store",
  version: "1.0.0",
  icon: "📦",
  description: "Keep values between runs in a workspace key-value store",
  actions: [
    keyAction({
      id: "get",
      name: "Get value",
      description: "Read the value at a key (the default when absent)",
      sideEffects: "read",
      props: { default_value: Property.json({ displayName: "Default", description: "Returned when the key has no value" }) },
      output: { found: { type: "boolean" }, value: { type: "json" } },
      sampleData: { key: "last_order_id", found: true, value: 1042 },
      run: async (ctx, key) => {
        const value = await ctx.store.get(key);
        return { found: value !== undefined, value: value === undefined ? (ctx.config.default_value ?? null) : value };
      },
    }),
    keyAction({
      id: "put",
      name: "Put value",
      description: "Set the value at a key (replacing any value)",
      sideEffects: "write",
      props: { value: Property.json({ displayName: "Value", required: true }) },
      output: { value: { type: "json" } },
      sampleData: { key: "last_order_id", value: 1043 },
      run: async (ctx, key) => {
        await ctx.store.put(key, ctx.config.value ?? null);
        return { value: ctx.config.value ?? null };
      },
    }),
    keyAction({
      id: "delete",
      name: "Delete value",
      description: "Remove a key",
      sideEffects: "write",
      output: { deleted: { type: "boolean" } },
      sampleData: { key: "last_order_id", deleted: true },
      run: async (ctx, key) => ({ deleted: await ctx.store.delete(key) }),
    }),
    keyAction({
      id: "append",
      name: "Append to list",
      description: "Append a value to the list at a key (creating it)",
      sideEffects: "write",
      props: { value: Property.json({ displayName: "Value", required: true }) },
      output: { length: { type: "integer" } },
      sampleData: { key: "seen_ids", length: 3 },
      run: async (ctx, key) => ({ length: await ctx.store.append(key, ctx.config.value ?? null) }),
    }),
  ],
});
