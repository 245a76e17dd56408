/**
 * The feed piece against a local HTTP server serving an RSS and an Atom document that gain items between
 * polls: the first poll after publishing is a baseline, then each new item starts exactly one run (also
 * across a restart), items are normalised the same way for every format, and read_feed reads a feed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFeedText } from "../../pieces/feed";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import { FakeClock } from "../../src/lib/clock";
import { createGuardedFetch } from "../../src/net/guarded-fetch";
import { definition, triggerApp, type TriggerApp } from "../triggers/harness";
import { fakeContext } from "./fake-context";

const rssItems: Array<{ guid: string; title: string; date: string }> = [];
const atomEntries: Array<{ id: string; title: string; updated: string }> = [];

const rss = () => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>
<title>Home lab news</title><link>https://lab.example/</link><description>What changed</description>
${rssItems.map((i) => `<item><title>${i.title}</title><link>https://lab.example/${i.guid}</link><guid isPermaLink="false">${i.guid}</guid><pubDate>${i.date}</pubDate><description>About ${i.title}</description><category>lab</category></item>`).join("\n")}
</channel></rss>`;
const atom = () => `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Release notes</title><id>urn:releases</id><updated>2026-11-01T00:00:00Z</updated><link href="https://rel.example/"/>
${atomEntries.map((e) => `<entry><title>${e.title}</title><id>${e.id}</id><link href="https://rel.example/${e.id}"/><updated>${e.updated}</updated><summary>${e.title} summary</summary><author><name>Ada</name></author></entry>`).join("\n")}
</feed>`;

let server: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/rss.xml") return new Response(rss(), { headers: { "content-type": "application/rss+xml" } });
      if (path === "/atom.xml") return new Response(atom(), { headers: { "content-type": "application/atom+xml" } });
      if (path === "/page.html") return new Response("<html><body>not a feed</body></html>", { headers: { "content-type": "text/html" } });
      return new Response("gone", { status: 404 });
    },
  });
});
afterAll(() => server.stop(true));

const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
const INTERVAL_S = 300;
const pollFeed = (path: string) => ({
  name: "trigger",
  type: "poll",
  pieceId: "feed",
  actionId: "new_item",
  config: { feed_url: url(path), poll_interval_seconds: INTERVAL_S },
});
const keep = {
  name: "keep",
  type: "PIECE",
  pieceId: "data",
  actionId: "set_fields",
  config: { fields: { title: "{{trigger.body.title}}", link: "{{trigger.body.link}}" } },
};

let h: TriggerApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function firedTitles(app: TriggerApp): Promise<string[]> {
  const outcomes = await app.triggers.poller.tick();
  const titles: string[] = [];
  for (const outcome of outcomes) for (const id of outcome.runIds ?? []) titles.push((await app.run(id)).triggerData.body.title);
  return titles;
}

describe("feed: new item trigger", () => {
  test("RSS: a baseline first, then each new item starts one run, none twice, across a restart", async () => {
    rssItems.length = 0;
    rssItems.push({ guid: "a1", title: "Old post", date: "Mon, 02 Nov 2026 08:00:00 GMT" });
    h = await triggerApp({ clock: new FakeClock("2026-11-25T08:00:00.000Z"), env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
    const wf = await h.publishWorkflow(definition(pollFeed("/rss.xml"), keep));
    expect(await firedTitles(h)).toEqual([]); // baseline: the old post does not start a run

    rssItems.unshift(
      { guid: "a2", title: "New NAS", date: "Wed, 25 Nov 2026 09:00:00 GMT" },
      { guid: "a3", title: "New switch", date: "Wed, 25 Nov 2026 09:30:00 GMT" },
    );
    h.clock.advance(INTERVAL_S * 1000);
    expect((await firedTitles(h)).sort()).toEqual(["New NAS", "New switch"]);
    h.clock.advance(INTERVAL_S * 1000);
    expect(await firedTitles(h)).toEqual([]); // nothing new: nothing fires

    h = await h.restart();
    await h.triggers.reconcile();
    rssItems.unshift({ guid: "a4", title: "After the restart", date: "Wed, 25 Nov 2026 10:00:00 GMT" });
    h.clock.advance(INTERVAL_S * 1000);
    expect(await firedTitles(h)).toEqual(["After the restart"]);
    const runs = (await h.runsOf(wf.id)).filter((r) => r.triggerType === "poll");
    expect(runs).toHaveLength(3);
    const run = await h.run(runs[0]!.id);
    expect(run.status).toBe("completed");
  });

  test("Atom: entries become the same item shape; the id is the entry's id", async () => {
    atomEntries.length = 0;
    atomEntries.push({ id: "v1.0", title: "1.0", updated: "2026-10-01T00:00:00Z" });
    h = await triggerApp({ clock: new FakeClock("2026-11-25T08:00:00.000Z"), env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
    await h.publishWorkflow(definition(pollFeed("/atom.xml"), keep));
    expect(await firedTitles(h)).toEqual([]);
    atomEntries.unshift({ id: "v1.1", title: "1.1", updated: "2026-11-25T07:00:00Z" });
    h.clock.advance(INTERVAL_S * 1000);
    const outcomes = await h.triggers.poller.tick();
    const run = await h.run(outcomes[0]!.runIds![0]!);
    expect(run.triggerData.body).toEqual({
      id: "v1.1",
      title: "1.1",
      link: "https://rel.example/v1.1",
      published: "2026-11-25T07:00:00.000Z",
      author: "Ada",
      summary: "1.1 summary",
      content: null,
      categories: [],
    });
  });

  test("a page that is not a feed fails the poll with a clear reason", async () => {
    await expect(readFeedText("<html><body>not a feed</body></html>")).rejects.toThrow("is not an RSS, Atom, RDF or JSON feed");
  });
});

describe("feed: read_feed", () => {
  const registry = builtinRegistry();
  const read = (config: Record<string, unknown>, fetchImpl = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"] })) => {
    const ctx = fakeContext(config);
    ctx.fetch = fetchImpl;
    return registry.action("feed", "read_feed")!.run(ctx) as Promise<any>;
  };

  test("outputs the feed's title and its items, at most limit", async () => {
    rssItems.length = 0;
    rssItems.push(
      { guid: "b2", title: "Second", date: "Wed, 25 Nov 2026 09:00:00 GMT" },
      { guid: "b1", title: "First", date: "Tue, 24 Nov 2026 09:00:00 GMT" },
    );
    const out = await read({ feed_url: url("/rss.xml"), limit: 1 });
    expect(out).toMatchObject({ format: "rss", title: "Home lab news", link: "https://lab.example/", description: "What changed" });
    expect(out.items).toEqual([
      {
        id: "b2",
        title: "Second",
        link: "https://lab.example/b2",
        published: "2026-11-25T09:00:00.000Z",
        author: null,
        summary: "About Second",
        content: null,
        categories: ["lab"],
      },
    ]);
  });

  test("errors name the cause: not a feed, a 404, a blocked address", async () => {
    await expect(read({ feed_url: url("/page.html") })).rejects.toThrow("not an RSS, Atom, RDF or JSON feed");
    await expect(read({ feed_url: url("/missing.xml") })).rejects.toThrow("answered 404");
    await expect(read({ feed_url: url("/rss.xml") }, createGuardedFetch())).rejects.toThrow(/WEFT_ALLOW_CIDRS/);
  });
});
