/**
 * The notify piece against a local server speaking the routes of ntfy, the Telegram Bot API and Discord
 * webhooks, and a loopback Gotify that follows Gotify's API docs (test/support/gotify.ts): what each
 * action sends (method, path, headers, JSON), what it outputs, how a refusal reads, and that the SSRF
 * guard stands between the piece and the network.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import { createGuardedFetch } from "../../src/net/guarded-fetch";
import { startGotify } from "../support/gotify";
import { fakeContext, loopback } from "./fake-context";

const registry = builtinRegistry();
let server: ReturnType<typeof loopback>;
let gotify: ReturnType<typeof startGotify>;
beforeAll(() => {
  gotify = startGotify();
  server = loopback((req, body) => {
    const url = new URL(req.url);
    const json = body ? JSON.parse(body) : null;
    if (url.pathname === "/" && req.method === "POST") {
      if (json.topic === "locked" && req.headers.get("authorization") !== "Bearer tk_right")
        return Response.json({ code: 40301, http: 403, error: "forbidden" }, { status: 403 });
      return Response.json({ id: "abc123", time: 1732500000, event: "message", topic: json.topic, message: json.message, title: json.title });
    }
    const telegram = /^\/bot(\d+:[\w-]+)\/sendMessage$/.exec(url.pathname);
    if (telegram) {
      if (json.chat_id === "404") return Response.json({ ok: false, error_code: 400, description: "Bad Request: chat not found" }, { status: 400 });
      return Response.json({ ok: true, result: { message_id: 42, chat: { id: Number(json.chat_id), type: "private" }, date: 1732500000, text: json.text } });
    }
    if (url.pathname.startsWith("/api/webhooks/")) {
      if (url.searchParams.get("wait") !== "true") return new Response(null, { status: 204 });
      return Response.json({ id: "1310000000000000000", channel_id: "1300000000000000000", content: json.content ?? "", embeds: json.embeds ?? [] });
    }
    return new Response("not found", { status: 404 });
  });
});
afterAll(() => {
  server.stop();
  gotify.stop();
});

const run = async (actionId: string, config: Record<string, unknown>, fetchImpl?: typeof fetch) => {
  const ctx = fakeContext(config);
  if (fetchImpl) ctx.fetch = fetchImpl as never;
  return (await registry.action("notify", actionId)!.run(ctx)) as any;
};
const last = () => server.requests.at(-1)!;

describe("notify", () => {
  test("ntfy: publishes JSON to the server root with topic, priority, tags and click; a protected topic gets the token", async () => {
    const out = await run("ntfy_send", {
      server_url: server.url,
      topic: "alerts",
      message: "Backup done",
      title: "NAS",
      priority: "high",
      tags: ["tada", "nas"],
      click_url: "https://nas.lan/",
    });
    expect(out).toMatchObject({ id: "abc123", topic: "alerts", message: "Backup done", title: "NAS" });
    expect(last().method).toBe("POST");
    expect(last().path).toBe("/");
    expect(JSON.parse(last().body)).toEqual({
      topic: "alerts",
      message: "Backup done",
      title: "NAS",
      priority: 4,
      tags: ["tada", "nas"],
      click: "https://nas.lan/",
    });
    await expect(run("ntfy_send", { server_url: server.url, topic: "locked", message: "x" })).rejects.toThrow("ntfy answered 403: forbidden");
    expect((await run("ntfy_send", { server_url: `${server.url}/`, topic: "locked", message: "x", access_token: "tk_right" })).topic).toBe("locked");
    await expect(run("ntfy_send", { server_url: server.url, topic: "alerts", message: "x", priority: "loud" })).rejects.toThrow(
      'priority "loud" is unknown; use min, low, default, high, urgent',
    );
  });

  test("Gotify: posts to /message with the application token; the output is the created message; a wrong token reads as Gotify's own words", async () => {
    const out = await run("gotify_send", { server_url: gotify.url, app_token: gotify.appToken, title: "NAS", message: "Backup done", priority: 8 });
    expect(out).toMatchObject({ id: 1, appid: 1, message: "Backup done", title: "NAS", priority: 8 });
    expect(out.date).toBeString();
    expect(gotify.messages).toHaveLength(1);
    await expect(run("gotify_send", { server_url: gotify.url, app_token: "wrong", message: "x" })).rejects.toThrow(
      "Gotify answered 401: you need to provide a valid access token or user credentials to access this api",
    );
    await expect(run("gotify_send", { server_url: gotify.url, app_token: gotify.clientToken, message: "x" })).rejects.toThrow(
      "Gotify answered 403: you are not allowed to access this api",
    );
    await expect(run("gotify_send", { server_url: "gotify.lan", app_token: "x", message: "x" })).rejects.toThrow('server_url "gotify.lan" is not a URL');
    await expect(run("gotify_send", { server_url: gotify.url, app_token: gotify.appToken, message: "" })).rejects.toThrow("message is empty");
    await expect(run("gotify_send", { server_url: gotify.url, app_token: gotify.appToken, message: "x", priority: 11 })).rejects.toThrow(
      "priority 11 must be a whole number from 0 to 10",
    );
    expect(gotify.messages).toHaveLength(1);
  });

  test("Gotify extras: Markdown and a click URL become Gotify's client::display and client::notification, merged with the extras given", async () => {
    const out = await run("gotify_send", {
      server_url: `${gotify.url}/`,
      app_token: gotify.appToken,
      message: "**Backup** done",
      markdown: true,
      click_url: "https://nas.lan/backups",
      extras: { "client::notification": { bigImageUrl: "https://nas.lan/chart.png" }, "home::source": "nas" },
    });
    const extras = {
      "client::display": { contentType: "text/markdown" },
      "client::notification": { bigImageUrl: "https://nas.lan/chart.png", click: { url: "https://nas.lan/backups" } },
      "home::source": "nas",
    };
    expect(out).toMatchObject({ message: "**Backup** done", priority: 5, extras });
    expect(gotify.messages.at(-1)!.extras).toEqual(extras);
    const plain = await run("gotify_send", { server_url: gotify.url, app_token: gotify.appToken, message: "plain" });
    expect(plain.extras).toBeUndefined();
    await expect(run("gotify_send", { server_url: gotify.url, app_token: gotify.appToken, message: "x", extras: ["no"] })).rejects.toThrow(
      "extras must be an object",
    );
  });

  test("Telegram: sendMessage on the configurable Bot API URL; the output is the sent message; a refusal names Telegram's reason", async () => {
    const out = await run("telegram_send_message", {
      base_url: server.url,
      bot_token: "123456:ABC-def_1",
      chat_id: "99",
      text: "*hi*",
      parse_mode: "MarkdownV2",
      disable_notification: true,
    });
    expect(out).toEqual({ message_id: 42, chat: { id: 99, type: "private" }, date: 1732500000, text: "*hi*" });
    expect(last().path).toBe("/bot123456:ABC-def_1/sendMessage");
    expect(JSON.parse(last().body)).toEqual({ chat_id: "99", text: "*hi*", parse_mode: "MarkdownV2", disable_notification: true });
    await expect(run("telegram_send_message", { base_url: server.url, bot_token: "123456:ABC", chat_id: "404", text: "x" })).rejects.toThrow(
      "Bad Request: chat not found",
    );
    await expect(run("telegram_send_message", { base_url: server.url, bot_token: "not a token", chat_id: "1", text: "x" })).rejects.toThrow(
      "does not look like a Telegram bot token",
    );
  });

  test("Discord: posts content, username and embeds with wait=true and outputs the created message", async () => {
    const embeds = [{ title: "Backup", description: "done", color: 3066993 }];
    const out = await run("discord_webhook", { webhook_url: `${server.url}/api/webhooks/1/tok`, content: "hello", username: "Weft", embeds });
    expect(out).toMatchObject({ id: "1310000000000000000", content: "hello", embeds });
    expect(last().path).toBe("/api/webhooks/1/tok?wait=true");
    expect(JSON.parse(last().body)).toEqual({ content: "hello", username: "Weft", embeds });
    await expect(run("discord_webhook", { webhook_url: `${server.url}/api/webhooks/1/tok` })).rejects.toThrow("needs content or embeds");
    await expect(run("discord_webhook", { webhook_url: `${server.url}/api/webhooks/1/tok`, content: "x".repeat(2001) })).rejects.toThrow("at most 2,000");
  });

  test("every request goes through the SSRF guard: a LAN server is refused until its range is allowed", async () => {
    const guarded = createGuardedFetch();
    await expect(run("ntfy_send", { server_url: server.url, topic: "alerts", message: "x" }, guarded as never)).rejects.toThrow(/WEFT_ALLOW_CIDRS/);
    const allowed = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"] });
    expect((await run("ntfy_send", { server_url: server.url, topic: "alerts", message: "x" }, allowed as never)).id).toBe("abc123");
  });

  test("every notify action declares external side effects (a restart never sends twice)", () => {
    for (const a of Object.values(registry.get("notify")!.actions)) expect(a.sideEffects).toBe("external");
  });
});
