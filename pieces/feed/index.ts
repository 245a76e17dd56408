/**
 * Feed: RSS, Atom, RDF and JSON Feed. A polling trigger starts a run for each new item (keyed by its
 * guid/id, else its link; the first poll after publishing only takes a baseline, so old items do not
 * flood), and an action reads a feed. Fetched through ctx.fetch (the SSRF guard), parsed with feedsmith.
 */
import { action, definePiece, httpRequest, loadOnce, Property, trigger } from "../../src/pieces-sdk";
import type { GuardedFetch, PollContext } from "../../src/pieces-sdk/types";

export interface FeedItem {
  /** The key new items are told by: guid or id, else the link, else title and date. */
  id: string;
  title: string | null;
  link: string | null;
  published: string | null;
  author: string | null;
  summary: string | null;
  content: string | null;
  categories: string[];
}

export interface Feed {
  format: string;
  title: string | null;
  link: string | null;
  description: string | null;
  items: FeedItem[];
}

/** Feed fields come as text, `{value}` objects or lists of either, depending on the format. */
function text(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value.trim() || null;
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return text(value[0]);
  if (typeof value === "object") {
    const v = value as Record<string, unknown>;
    return text(v.value ?? v.href ?? v.name ?? v.url ?? null);
  }
  return null;
}

function isoDate(value: unknown): string | null {
  const raw = text(value);
  if (!raw) return null;
  const time = Date.parse(raw);
  return Number.isNaN(time) ? raw : new Date(time).toISOString();
}

/** A node of a parsed feed: its shape depends on the format, so fields are read and checked one by one. */
type FeedNode = Record<string, unknown>;

function linkOf(entry: FeedNode): string | null {
  if (typeof entry.link === "string") return entry.link;
  const links: Array<FeedNode | null | undefined> = Array.isArray(entry.links) ? entry.links : [];
  const alternate = links.find((l) => !l?.rel || l.rel === "alternate") ?? links[0];
  return text(alternate?.href ?? entry.url ?? entry.external_url ?? null);
}

function itemOf(entry: FeedNode): FeedItem {
  const dc = entry.dc as FeedNode | null | undefined;
  const link = linkOf(entry);
  const title = text(entry.title);
  const published = isoDate(entry.pubDate ?? entry.published ?? entry.date_published ?? entry.updated ?? entry.date_modified ?? dc?.date);
  const guid = text(entry.guid ?? entry.id);
  const categories = (Array.isArray(entry.categories) ? entry.categories : Array.isArray(entry.tags) ? entry.tags : [])
    .map((c: unknown) => text(typeof c === "object" && c !== null ? ((c as FeedNode).name ?? (c as FeedNode).term ?? c) : c))
    .filter((c: string | null): c is string => Boolean(c));
  return {
    id: guid ?? link ?? `${title ?? ""}|${published ?? ""}`,
    title,
    link,
    published,
    author: text(entry.author ?? (entry.authors as ArrayLike<unknown> | null | undefined)?.[0] ?? dc?.creator ?? dc?.creators),
    summary: text(entry.description ?? entry.summary),
    content: text((entry.content as FeedNode | null | undefined)?.encoded ?? entry.content ?? entry.content_html ?? entry.content_text),
    categories,
  };
}

/** feedsmith, loaded with the first feed step or poll. */
const feedsmith = loadOnce(() => import("feedsmith"));

/** Parses a feed document of any supported format; a document that is no feed says so. */
export async function readFeedText(body: string): Promise<Feed> {
  const { parseFeed } = await feedsmith();
  let parsed: { format: string; feed: FeedNode };
  try {
    parsed = parseFeed(body) as unknown as { format: string; feed: FeedNode };
  } catch (error) {
    throw new Error(`the document is not an RSS, Atom, RDF or JSON feed (${(error as Error).message}); check the feed URL`);
  }
  const feed = parsed.feed;
  const entries = (feed.items ?? feed.entries ?? []) as FeedNode[];
  return {
    format: parsed.format,
    title: text(feed.title),
    link: linkOf(feed) ?? text(feed.home_page_url),
    description: text(feed.description ?? feed.subtitle),
    items: entries.map(itemOf),
  };
}

async function fetchFeed(fetch: GuardedFetch, url: unknown, signal: AbortSignal): Promise<Feed> {
  const target = String(url ?? "").trim();
  if (!/^https?:\/\//i.test(target)) throw new Error(`feed_url "${target}" must be an http:// or https:// URL`);
  const text = await httpRequest<string>(fetch, target, {
    service: "the feed server",
    label: `GET ${target}`,
    headers: { accept: "application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, */*;q=0.8", "user-agent": "weft" },
    signal,
    read: "text",
  });
  return readFeedText(text);
}

const feedUrl = () => Property.shortText({ displayName: "Feed URL", required: true, format: "uri", description: "an RSS, Atom, RDF or JSON Feed URL" });

/** An item as the action and the trigger give it (`itemOf`), for the editor's sample data. */
const SAMPLE_ITEM: FeedItem = {
  id: "https://example.com/1",
  title: "Hello",
  link: "https://example.com/1",
  published: "2026-11-25T08:00:00.000Z",
  author: null,
  summary: "First post",
  content: null,
  categories: [],
};

export default definePiece({
  id: "feed",
  name: "RSS / Atom feed",
  version: "1.0.0",
  icon: "📰",
  description: "New items of RSS, Atom, RDF and JSON feeds",
  actions: [
    action({
      id: "read_feed",
      name: "Read a feed",
      description: "Fetch a feed and output its title and items, newest first as the feed lists them",
      sideEffects: "read",
      props: {
        feed_url: feedUrl(),
        limit: Property.integer({ displayName: "Most items", min: 1, max: 1000, default: 50 }),
      },
      sampleData: {
        format: "rss",
        title: "Example blog",
        link: "https://example.com/",
        description: "News",
        items: [SAMPLE_ITEM],
      },
      async run(ctx) {
        const feed = await fetchFeed(ctx.fetch, ctx.config.feed_url, ctx.signal);
        const limit = Number(ctx.config.limit ?? 50);
        return { ...feed, items: feed.items.slice(0, limit) };
      },
    }),
  ],
  triggers: [
    trigger({
      id: "new_item",
      name: "New feed item",
      description: "Polls the feed and starts a run for each item not seen before (the first poll after publishing takes a baseline)",
      type: "poll",
      props: {
        feed_url: feedUrl(),
        poll_interval_seconds: Property.integer({
          displayName: "Check every (seconds)",
          min: 1,
          description: "default WEFT_POLL_INTERVAL (300); never more often than WEFT_POLL_MIN_INTERVAL (60)",
        }),
      },
      sampleData: SAMPLE_ITEM,
      poll: async (ctx: PollContext) => (await fetchFeed(ctx.fetch, ctx.config.feed_url, AbortSignal.timeout(30_000))).items,
      dedupe: { strategy: "id", key: (item: FeedItem) => item.id },
    }),
  ],
});
