/**
 * Polling on a fake clock: the first poll is a baseline, new items fire once, republish keeps the
 * baseline, unpublish resets it, failures are recorded with backoff.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { FakeClock } from "../../src/lib/clock";
import { definePiece, trigger } from "../../src/pieces-sdk";
import { definition, triggerApp, type TriggerApp } from "./harness";

const feed = { items: [] as Array<Record<string, unknown>>, fail: null as string | null, polls: [] as Array<string | undefined> };

const feedPiece = definePiece({
  id: "memfeed",
  name: "Feed",
  version: "1.0.0",
  description: "an in-memory feed for poll tests",
  actions: [],
  triggers: [
    trigger({
      id: "new_item",
      name: "New item",
      description: "by id",
      type: "poll",
      props: {},
      poll: async (ctx) => {
        feed.polls.push(ctx.lastPollAt);
        if (feed.fail) throw new Error(feed.fail);
        return structuredClone(feed.items);
      },
      dedupe: { strategy: "id", key: (item) => item.id },
    }),
    trigger({
      id: "new_since",
      name: "New since",
      description: "by time",
      type: "poll",
      props: {},
      poll: async () => structuredClone(feed.items),
      dedupe: { strategy: "time", key: (item) => item.at },
    }),
  ],
});

const INTERVAL_MS = 120_000;
const pollTrigger = (triggerId = "new_item") => ({
  name: "trigger",
  displayName: "Poll",
  type: "poll",
  pieceId: "memfeed",
  actionId: triggerId,
  config: { poll_interval_seconds: INTERVAL_MS / 1000 },
});
const step = { name: "keep", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { title: "{{trigger.body.title}}" } } };

let h: TriggerApp;
beforeEach(async () => {
  feed.items = [
    { id: 1, title: "old one" },
    { id: 2, title: "old two" },
  ];
  feed.fail = null;
  feed.polls = [];
  h = await triggerApp({ clock: new FakeClock("2025-01-06T09:00:00.000Z"), pieces: [feedPiece] });
});
afterEach(async () => {
  await h.close();
});

async function poll() {
  const outcomes = await h.triggers.poller.tick();
  return outcomes;
}
const status = async (id: string) => (await h.req("GET", `/api/workflows/${id}/trigger`)).body.data.poll;
const titles = async (runIds: string[]) => Promise.all(runIds.map(async (id) => (await h.run(id)).triggerData.body.title));

describe("polling", () => {
  test("the first poll takes a baseline without firing; later polls fire once per new item", async () => {
    const wf = await h.publishWorkflow(definition(pollTrigger(), step));
    const [first] = await poll();
    expect(first).toMatchObject({ result: "baseline", runIds: [] });
    expect((await status(wf.id)).hasBaseline).toBe(true);

    feed.items.unshift({ id: 3, title: "new three" });
    expect(await poll()).toEqual([]); // not due yet
    h.clock.advance(INTERVAL_MS);
    const [second] = await poll();
    expect(second!.result).toBe("fired");
    expect(await titles(second!.runIds)).toEqual(["new three"]);
    const run = await h.run(second!.runIds[0]!);
    expect(run.triggerType).toBe("poll");
    expect(run.status).toBe("completed");
    expect(run.steps.find((s: any) => s.nodeId === "keep").outputData).toEqual({ title: "new three" });

    h.clock.advance(INTERVAL_MS);
    const [third] = await poll();
    expect(third!.runIds).toEqual([]);
    // The piece learns when the last successful poll was.
    expect(feed.polls.at(-1)).toBe(new Date(Date.parse("2025-01-06T09:02:00.000Z")).toISOString());
  });

  test("republishing a live workflow keeps the baseline: nothing is lost or repeated", async () => {
    const wf = await h.publishWorkflow(definition(pollTrigger(), step));
    await poll();
    feed.items.unshift({ id: 3, title: "arrived during the edit" });
    const edited = definition(pollTrigger(), { ...step, config: { fields: { title: "{{trigger.body.title}}", edited: true } } });
    expect((await h.req("PUT", `/api/workflows/${wf.id}`, { body: { name: "wf", definition: edited } })).status).toBe(200);
    expect((await h.publish(wf.id)).status).toBe(200);
    h.clock.advance(INTERVAL_MS);
    const [outcome] = await poll();
    expect(outcome!.result).toBe("fired");
    expect(await titles(outcome!.runIds)).toEqual(["arrived during the edit"]);
  });

  test("unpublish resets the baseline: after publishing again, items from before are not fired", async () => {
    const wf = await h.publishWorkflow(definition(pollTrigger(), step));
    await poll();
    expect((await h.req("POST", `/api/workflows/${wf.id}/unpublish`)).status).toBe(200);
    expect(await status(wf.id)).toBeNull();
    feed.items.unshift({ id: 3, title: "arrived while paused" });
    h.clock.advance(INTERVAL_MS);
    expect(await poll()).toEqual([]); // paused: not polled at all
    expect((await h.publish(wf.id)).status).toBe(200);
    const [outcome] = await poll();
    expect(outcome).toMatchObject({ result: "baseline", runIds: [] });
    expect((await h.runsOf(wf.id)).filter((r) => r.triggerType === "poll")).toEqual([]);
  });

  test("failures are recorded and visible, and retried with exponential backoff", async () => {
    const wf = await h.publishWorkflow(definition(pollTrigger(), step));
    await poll();
    feed.fail = "feed answered 503";
    h.clock.advance(INTERVAL_MS);
    const [failed] = await poll();
    expect(failed).toMatchObject({ result: "failed", error: "feed answered 503" });
    expect(await status(wf.id)).toMatchObject({ failures: 1, lastError: "feed answered 503", nextPollAt: "2025-01-06T09:06:00.000Z" });
    expect(h.logLines.some((line) => line.includes("poll failed") && line.includes("feed answered 503"))).toBe(true);

    h.clock.advance(INTERVAL_MS); // 09:04: still backing off
    expect(await poll()).toEqual([]);
    h.clock.advance(INTERVAL_MS); // 09:06
    expect((await poll())[0]!.result).toBe("failed");
    expect(await status(wf.id)).toMatchObject({ failures: 2, nextPollAt: "2025-01-06T09:14:00.000Z" });

    feed.fail = null;
    feed.items.unshift({ id: 3, title: "after the outage" });
    h.clock.set("2025-01-06T09:14:00.000Z");
    const [recovered] = await poll();
    expect(await titles(recovered!.runIds)).toEqual(["after the outage"]);
    expect(await status(wf.id)).toMatchObject({ failures: 0, lastError: null, nextPollAt: "2025-01-06T09:16:00.000Z" });
  });

  test("dedupe by time fires only items newer than the newest seen", async () => {
    feed.items = [{ at: "2025-01-05T10:00:00Z", title: "yesterday" }];
    await h.publishWorkflow(definition(pollTrigger("new_since"), step));
    await poll();
    feed.items = [
      { at: "2025-01-06T09:01:00Z", title: "fresh" },
      { at: "2025-01-05T10:00:00Z", title: "yesterday" },
      { at: "2025-01-04T10:00:00Z", title: "older, newly listed" },
    ];
    h.clock.advance(INTERVAL_MS);
    const [outcome] = await poll();
    expect(await titles(outcome!.runIds)).toEqual(["fresh"]);
  });

  test("the baseline survives a restart", async () => {
    const wf = await h.publishWorkflow(definition(pollTrigger(), step));
    await poll();
    h = await h.restart();
    await h.triggers.reconcile();
    feed.items.unshift({ id: 3, title: "after restart" });
    h.clock.advance(INTERVAL_MS);
    const [outcome] = await poll();
    expect(outcome!.result).toBe("fired");
    expect(await titles(outcome!.runIds)).toEqual(["after restart"]);
    expect((await h.runsOf(wf.id)).filter((r) => r.triggerType === "poll")).toHaveLength(1);
  });
});
