/** Tags: attach tags to the run, so runs can be found by them (GET /api/runs?tag=…). */
import { action, definePiece, Property } from "../../src/pieces-sdk";

const MAX_TAG = 100;

export function normaliseTags(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : value === undefined || value === null ? [] : [value];
  const tags: string[] = [];
  for (const item of list) {
    const tag = String(item).trim();
    if (!tag) continue;
    if (tag.length > MAX_TAG) throw new Error(`tag "${tag.slice(0, 20)}…" is longer than ${MAX_TAG} characters`);
    if (!tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

export default definePiece({
  id: "tags",
  name: "Tags",
  version: "1.0.0",
  icon: "🏷️",
  description: "Attach tags to the current run",
  actions: [
    action({
      id: "add_tags",
      name: "Add tags",
      description: "Attach tags to the run (a list, or comma-separated text); duplicates are ignored",
      sideEffects: "write",
      props: { tags: Property.array({ displayName: "Tags", required: true, items: { type: "string" } }) },
      outputSchema: { type: "object", properties: { tags: { type: "array", items: { type: "string" } } } },
      sampleData: { tags: ["vip", "eu"] },
      run: (ctx) => {
        const tags = normaliseTags(ctx.config.tags);
        if (tags.length === 0) throw new Error("tags is empty; give at least one tag");
        ctx.addTags(tags);
        return { tags };
      },
    }),
  ],
});
