import { describe, expect, test } from "bun:test";
import { BoundedMap } from "../../src/lib/bounded-map";

describe("BoundedMap", () => {
  test("keeps between half its capacity and its capacity, always the most recent insertions", () => {
    const map = new BoundedMap<number, number>(10);
    for (let i = 0; i < 1000; i++) {
      map.set(i, i * 2);
      expect(map.size).toBeLessThanOrEqual(10);
      // The newest five are always there, with their values.
      for (let j = Math.max(0, i - 4); j <= i; j++) expect(map.get(j)).toBe(j * 2);
    }
    expect(map.size).toBeGreaterThanOrEqual(5);
    expect(map.has(0)).toBe(false);
    expect(map.get(500)).toBeUndefined();
  });

  test("setting a key again keeps one entry with the newest value", () => {
    const map = new BoundedMap<string, number>(4);
    map.set("a", 1);
    map.set("b", 2); // generation turns over on the next insert
    map.set("a", 3);
    expect(map.get("a")).toBe(3);
    expect(map.size).toBe(2);
    map.set("c", 4);
    map.set("d", 5);
    expect(map.get("a")).toBe(3);
    expect(map.has("b")).toBe(false);
  });

  test("delete removes a key from either generation; clear empties it", () => {
    const map = new BoundedMap<string, number>(4);
    map.set("a", 1);
    map.set("b", 2);
    map.set("c", 3);
    expect(map.delete("a")).toBe(true);
    expect(map.delete("c")).toBe(true);
    expect(map.delete("zzz")).toBe(false);
    expect([map.has("a"), map.has("b"), map.has("c")]).toEqual([false, true, false]);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.get("b")).toBeUndefined();
  });

  test("an undefined value is stored and read back as present", () => {
    const map = new BoundedMap<string, undefined | number>(4);
    map.set("a", undefined);
    expect(map.has("a")).toBe(true);
  });

  test("recall keeps a used entry through rotations (a cache's hot entry), get does not", () => {
    const cache = new BoundedMap<string, number>(4);
    cache.set("hot", 1);
    cache.set("cold", 2);
    for (let i = 0; i < 20; i++) {
      cache.set(`filler-${i}`, i);
      expect(cache.recall("hot")).toBe(1);
    }
    expect(cache.get("hot")).toBe(1);
    expect(cache.get("cold")).toBeUndefined();
    expect(cache.size).toBeLessThanOrEqual(4);
    expect(cache.recall("missing")).toBeUndefined();
  });
});
