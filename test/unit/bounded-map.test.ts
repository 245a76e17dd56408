import { describe, expect, test } from "bun:test";
import { BoundedMap } from "../../src/core/bounded-map";

describe("BoundedMap", () => {
  test("keeps at most its capacity, forgetting the oldest insertion first", () => {
    const map = new BoundedMap<string, number>(3);
    for (const [i, key] of ["a", "b", "c", "d", "e"].entries()) map.set(key, i);
    expect(map.size).toBe(3);
    expect(map.has("a")).toBe(false);
    expect(map.has("b")).toBe(false);
    expect([map.get("c"), map.get("d"), map.get("e")]).toEqual([2, 3, 4]);
  });

  test("a key set again is not evicted by its older insertion", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1);
    map.set("b", 2);
    map.set("a", 3); // the oldest slot is "a" itself: it is replaced, "b" stays
    expect(map.get("a")).toBe(3);
    map.set("c", 4); // evicts "b"
    expect(map.has("b")).toBe(false);
    expect(map.get("a")).toBe(3);
    expect(map.size).toBe(2);
  });

  test("deleted keys free their place without disturbing later ones", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1);
    map.delete("a");
    map.set("b", 2);
    map.set("c", 3);
    expect(map.size).toBe(2);
    expect([map.get("b"), map.get("c")]).toEqual([2, 3]);
  });
});
