/**
 * Notify: push a message to your phone or chat — ntfy, Gotify, a Telegram bot, a Discord webhook.
 * Each action takes its server or bot as step settings (the token fields are masked wherever a run is
 * shown), so a home-lab server on the LAN works as well as the public services once its range is allowed
 * (WEFT_ALLOW_CIDRS). Every request goes through ctx.fetch, the SSRF guard.
 *
 *   { "pieceId": "notify", "actionId": "ntfy_send", "config": { "topic": "alerts", "message": "{{trigger.body.text}}" } }
 */
import { action, baseUrlOf, definePiece, httpRequest, Property } from "../../src/pieces-sdk";
import type { GuardedFetch } from "../../src/pieces-sdk/types";

/** POSTs JSON and returns the parsed answer; a non-2xx answer throws with the service's own words. */
function postJson(fetch: GuardedFetch, service: string, url: string, body: unknown, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  return httpRequest(fetch, url, { service, method: "POST", headers, json: body, signal });
}

/** A base URL without its trailing slashes, refusing anything but http(s). */
const baseUrl = (value: unknown, field: string) => baseUrlOf(value, field, "https://ntfy.sh or http://192.168.1.10:8080");

const tagsOf = (value: unknown): string[] =>
  Array.isArray(value)
    ? value
        .map(String)
        .map((s) => s.trim())
        .filter(Boolean)
    : typeof value === "string"
      ? value
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : [];

/**
 * Gotify's `extras` (its "Message Extras" documentation): the given object, with `client::display`
 * contentType text/markdown when Markdown is on and `client::notification` click.url for a click URL.
 */
function gotifyExtras(c: Record<string, unknown>): Record<string, unknown> {
  const given = c.extras === undefined || c.extras === null || c.extras === "" ? {} : c.extras;
  if (typeof given !== "object" || Array.isArray(given))
    throw new Error('extras must be an object, e.g. {"client::notification": {"click": {"url": "https://…"}}}');
  const extras = { ...(given as Record<string, unknown>) };
  const within = (key: string) => ({ ...((extras[key] as Record<string, unknown> | undefined) ?? {}) });
  if (c.markdown === true) extras["client::display"] = { ...within("client::display"), contentType: "text/markdown" };
  if (c.click_url) extras["client::notification"] = { ...within("client::notification"), click: { url: String(c.click_url) } };
  return extras;
}

const NTFY_PRIORITIES: Record<string, number> = { min: 1, low: 2, default: 3, high: 4, urgent: 5 };

export default definePiece({
  id: "notify",
  name: "Notify",
  version: "1.0.0",
  icon: "🔔",
  description: "Push notifications and chat messages: ntfy, Gotify, Telegram, Discord",
  actions: [
    action({
      id: "ntfy_send",
      name: "Send an ntfy notification",
      description: "Publish a message to an ntfy topic (ntfy.sh or your own server)",
      sideEffects: "external",
      props: {
        server_url: Property.shortText({
          displayName: "Server URL",
          description: "your ntfy server, e.g. http://192.168.1.10:8080",
          default: "https://ntfy.sh",
        }),
        topic: Property.shortText({ displayName: "Topic", required: true, pattern: "^[-_A-Za-z0-9]{1,64}$", description: "letters, digits, - and _" }),
        message: Property.longText({ displayName: "Message", required: true }),
        title: Property.shortText({ displayName: "Title" }),
        priority: Property.staticDropdown({ displayName: "Priority", default: "default", options: Object.keys(NTFY_PRIORITIES) }),
        tags: Property.array({
          displayName: "Tags",
          description: "ntfy tags; emoji short codes such as warning or tada show as icons",
          items: { type: "string" },
        }),
        click_url: Property.shortText({ displayName: "Click URL", description: "opened when the notification is tapped" }),
        access_token: Property.secretText({ displayName: "Access token", description: "for a protected topic (tk_…); leave empty for public topics" }),
      },
      sampleData: { id: "sPs8NzFjDQxk", time: 1732500000, event: "message", topic: "alerts", message: "Backup finished", title: "NAS" },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const priority = NTFY_PRIORITIES[String(c.priority ?? "default")];
        if (priority === undefined) throw new Error(`priority "${c.priority}" is unknown; use ${Object.keys(NTFY_PRIORITIES).join(", ")}`);
        const body: Record<string, unknown> = { topic: String(c.topic ?? ""), message: String(c.message ?? ""), priority };
        if (c.title) body.title = String(c.title);
        const tags = tagsOf(c.tags);
        if (tags.length) body.tags = tags;
        if (c.click_url) body.click = String(c.click_url);
        const headers: Record<string, string> = c.access_token ? { authorization: `Bearer ${c.access_token}` } : {};
        return postJson(ctx.fetch, "ntfy", `${baseUrl(c.server_url ?? "https://ntfy.sh", "server_url")}/`, body, headers, ctx.signal);
      },
    }),
    action({
      id: "gotify_send",
      name: "Send a Gotify message",
      description: "Send a message through your Gotify server with an application token",
      sideEffects: "external",
      props: {
        server_url: Property.shortText({ displayName: "Server URL", required: true, description: "e.g. http://192.168.1.10:8070" }),
        app_token: Property.secretText({ displayName: "Application token", required: true, description: "from Gotify → Apps" }),
        message: Property.longText({ displayName: "Message", required: true }),
        title: Property.shortText({ displayName: "Title" }),
        priority: Property.integer({ displayName: "Priority", description: "0 (silent) to 10 (loudest)", min: 0, max: 10, default: 5 }),
        markdown: Property.checkbox({ displayName: "Markdown", description: "the Gotify apps show the message as Markdown", default: false }),
        click_url: Property.shortText({ displayName: "Click URL", description: "opened when the notification is tapped (Android app)" }),
        extras: Property.json({
          displayName: "Extras",
          description: 'more of Gotify\'s extras, e.g. {"client::notification": {"bigImageUrl": "https://…"}}',
        }),
      },
      sampleData: { id: 25, appid: 1, message: "Backup finished", title: "NAS", priority: 5, date: "2026-11-25T08:00:00Z" },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const message = String(c.message ?? "");
        if (!message) throw new Error("message is empty; Gotify needs a message to send");
        const priority = Number(c.priority ?? 5);
        if (!Number.isInteger(priority) || priority < 0 || priority > 10) throw new Error(`priority ${c.priority} must be a whole number from 0 to 10`);
        const body: Record<string, unknown> = { message, priority };
        if (c.title) body.title = String(c.title);
        const extras = gotifyExtras(c);
        if (Object.keys(extras).length) body.extras = extras;
        return postJson(ctx.fetch, "Gotify", `${baseUrl(c.server_url, "server_url")}/message`, body, { "x-gotify-key": String(c.app_token ?? "") }, ctx.signal);
      },
    }),
    action({
      id: "telegram_send_message",
      name: "Send a Telegram message",
      description: "Send a message from your Telegram bot to a chat, group or channel",
      sideEffects: "external",
      props: {
        bot_token: Property.secretText({ displayName: "Bot token", required: true, description: "from @BotFather, e.g. 123456:ABC-DEF…" }),
        chat_id: Property.shortText({ displayName: "Chat id", required: true, description: "a numeric chat id, or @channelname" }),
        text: Property.longText({ displayName: "Text", required: true }),
        parse_mode: Property.staticDropdown({ displayName: "Formatting", default: "none", options: ["none", "MarkdownV2", "HTML"] }),
        disable_notification: Property.checkbox({ displayName: "Send silently", default: false }),
        base_url: Property.shortText({
          displayName: "Bot API URL",
          default: "https://api.telegram.org",
          description: "a local Bot API server, if you run one",
        }),
      },
      sampleData: { message_id: 42, chat: { id: 123456789, type: "private" }, date: 1732500000, text: "Backup finished" },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const token = String(c.bot_token ?? "");
        if (!/^\d+:[\w-]+$/.test(token)) throw new Error("bot_token does not look like a Telegram bot token (digits:letters, from @BotFather)");
        const body: Record<string, unknown> = { chat_id: String(c.chat_id ?? ""), text: String(c.text ?? "") };
        if (c.parse_mode && c.parse_mode !== "none") body.parse_mode = String(c.parse_mode);
        if (c.disable_notification === true) body.disable_notification = true;
        const answer = (await postJson(
          ctx.fetch,
          "Telegram",
          `${baseUrl(c.base_url ?? "https://api.telegram.org", "base_url")}/bot${token}/sendMessage`,
          body,
          {},
          ctx.signal,
        )) as { ok?: unknown; description?: unknown; result?: unknown } | null;
        if (answer?.ok !== true) throw new Error(`Telegram refused the message: ${answer?.description ?? JSON.stringify(answer).slice(0, 200)}`);
        return answer.result;
      },
    }),
    action({
      id: "discord_webhook",
      name: "Post to a Discord webhook",
      description: "Post a message to a Discord channel through its webhook URL",
      sideEffects: "external",
      props: {
        webhook_url: Property.secretText({
          displayName: "Webhook URL",
          required: true,
          description: "Channel settings → Integrations → Webhooks → Copy webhook URL",
        }),
        content: Property.longText({ displayName: "Message", description: "up to 2,000 characters" }),
        username: Property.shortText({ displayName: "Post as", description: "overrides the webhook's name" }),
        embeds: Property.json({
          displayName: "Embeds",
          description: 'Discord embed objects, e.g. [{"title": "Backup", "description": "done", "color": 3066993}]',
        }),
      },
      sampleData: { id: "1310000000000000000", channel_id: "1300000000000000000", content: "Backup finished" },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const content = c.content === undefined || c.content === null ? "" : String(c.content);
        const embeds = c.embeds === undefined || c.embeds === null || c.embeds === "" ? undefined : c.embeds;
        if (embeds !== undefined && !Array.isArray(embeds)) throw new Error("embeds must be a list of Discord embed objects");
        if (!content && !embeds) throw new Error("a Discord message needs content or embeds");
        if (content.length > 2000) throw new Error(`content has ${content.length} characters; Discord takes at most 2,000`);
        const body: Record<string, unknown> = {};
        if (content) body.content = content;
        if (c.username) body.username = String(c.username);
        if (embeds) body.embeds = embeds;
        const url = new URL(baseUrl(c.webhook_url, "webhook_url"));
        url.searchParams.set("wait", "true"); // Discord answers with the message it created
        return postJson(ctx.fetch, "Discord", url.href, body, {}, ctx.signal);
      },
    }),
  ],
  triggers: [],
});
