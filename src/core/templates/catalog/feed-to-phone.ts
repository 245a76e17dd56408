import { base, type BuiltinTemplate, phoneVariables, pushToPhone } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000012",
  slug: "feed-to-phone",
  name: "New feed item → phone (ntfy)",
  description: "Watch an RSS or Atom feed and push each new item to your phone through ntfy. Set variables.feedUrl, ntfyServer and ntfyTopic",
  category: "polling",
  definition: base(
    {
      name: "trigger",
      displayName: "New feed item",
      type: "poll",
      pieceId: "feed",
      actionId: "new_item",
      config: { feed_url: "https://github.com/oven-sh/bun/releases.atom", poll_interval_seconds: 900 },
      nextAction: pushToPhone({
        title: "{{trigger.body.title}}",
        message: "{{trigger.body.summary ? trigger.body.summary : trigger.body.link}}",
        click_url: "{{trigger.body.link}}",
      }),
    },
    phoneVariables("my-feeds"),
  ),
} satisfies BuiltinTemplate;
