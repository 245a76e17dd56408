/** Poll dedupe strategies on their own: by last item id and by time. */
import { describe, expect, test } from "bun:test";
import { diff, MAX_SEEN_IDS } from "../../src/core/triggers/poller";

const byId = { strategy: "id" as const, key: (item: any) => item.id };
const byTime = { strategy: "time" as const, key: (item: any) => item.at };

describe("poll dedupe", () => {
  test("by id: the first poll is the baseline; later polls yield only unseen ids", () => {
    const first = diff(null, [{ id: 1 }, { id: 2 }], byId, {});
    expect(first.baseline).toEqual({ strategy: "id", ids: [1, 2] });
    const second = diff(first.baseline, [{ id: 3 }, { id: 1 }, { id: 2 }], byId, {});
    expect(second.fresh).toEqual([{ id: 3 }]);
    // An item that drops out of the response and comes back is still known.
    const third = diff(second.baseline, [{ id: 4 }], byId, {});
    expect(third.fresh).toEqual([{ id: 4 }]);
    expect(diff(third.baseline, [{ id: 2 }], byId, {}).fresh).toEqual([]);
  });

  test("by id: duplicates inside one response fire once; the seen set is bounded", () => {
    expect(diff({ strategy: "id", ids: [] }, [{ id: 9 }, { id: 9 }], byId, {}).fresh).toEqual([{ id: 9 }]);
    const many = Array.from({ length: MAX_SEEN_IDS + 500 }, (_, i) => ({ id: i }));
    expect((diff(null, many, byId, {}).baseline as any).ids.length).toBe(MAX_SEEN_IDS);
  });

  test("by time: only items newer than the newest seen", () => {
    const first = diff(null, [{ at: "2025-01-01T00:00:00Z" }, { at: "2025-01-02T00:00:00Z" }], byTime, {});
    expect(first.baseline).toEqual({ strategy: "time", time: Date.parse("2025-01-02T00:00:00Z") });
    const second = diff(first.baseline, [{ at: "2025-01-02T00:00:00Z" }, { at: "2025-01-03T00:00:00Z" }, { at: 0 }], byTime, {});
    expect(second.fresh).toEqual([{ at: "2025-01-03T00:00:00Z" }]);
  });
});
