import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000005",
  slug: "poll-json-store",
  name: "Poll a JSON feed → keep new items",
  description: "Poll a JSON endpoint; each item whose id was not seen before starts a run that appends it to a list in the store",
  category: "polling",
  definition: base(
    {
      name: "trigger",
      displayName: "New feed item",
      type: "poll",
      pieceId: "http",
      actionId: "poll_json",
      config: { url: "{{variables.feedUrl}}", items_path: "items", id_field: "id", auth_type: "none" },
      nextAction: {
        name: "keep",
        displayName: "Append to the list",
        type: "PIECE",
        pieceId: "store",
        actionId: "append",
        config: { key: "feed_items", value: "{{trigger}}" },
        nextAction: { name: "tag", displayName: "Tag run", type: "PIECE", pieceId: "tags", actionId: "add_tags", config: { tags: ["feed"] } },
      },
    },
    { variables: { feedUrl: "https://example.com/feed.json" } },
  ),
} satisfies BuiltinTemplate;
