/** The key-value store behind ctx.store (the storage port's): workspace-scoped, JSON values, atomic append, every call a promise. */
import { beforeAll, describe, expect, test } from "bun:test";
import type { KeyValueStore } from "../../src/pieces-sdk/types";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import { workspaceKv } from "../../src/store/kv";
import { storageOf } from "../../src/store/storage";
import { testApp, type TestApp } from "../support/app";
import { fakeContext } from "./fake-context";

let t: TestApp;
let mine: string;
let theirs: string;
let of: (workspaceId: string) => KeyValueStore;
beforeAll(async () => {
  t = await testApp();
  of = (workspaceId) => workspaceKv(storageOf(t.db), workspaceId);
  mine = (await t.req("GET", "/api/auth/me")).body.data.workspace.id;
  theirs = (await t.otherWorkspace()).workspaceId;
});

describe("the workspace key-value store", () => {
  test("values round-trip as JSON and survive a new handle", async () => {
    const store = of(mine);
    await store.put("obj", { a: [1, "two", null], b: true });
    await store.put("n", 42);
    expect(await store.get("obj")).toEqual({ a: [1, "two", null], b: true });
    expect(await of(mine).get("n")).toBe(42);
    expect(await store.get("missing")).toBeUndefined();
    await store.put("n", 43);
    expect(await store.get("n")).toBe(43);
  });

  test("workspaces never see each other's keys", async () => {
    await of(mine).put("shared-name", "mine");
    const other = of(theirs);
    expect(await other.get("shared-name")).toBeUndefined();
    expect(await other.delete("shared-name")).toBe(false);
    await other.put("shared-name", "theirs");
    expect(await of(mine).get("shared-name")).toBe("mine");
  });

  test("append creates and extends a list; refuses a non-list; concurrent appends lose no item", async () => {
    const store = of(mine);
    expect(await store.append("list", { id: 1 })).toBe(1);
    expect(await store.append("list", { id: 2 })).toBe(2);
    expect(await store.get("list")).toEqual([{ id: 1 }, { id: 2 }]);
    await store.put("scalar", 1);
    await expect(store.append("scalar", 2)).rejects.toThrow("not a list");
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.append("many", i)));
    expect(((await store.get("many")) as number[]).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  test("delete reports whether a key existed; keys and values are checked", async () => {
    const store = of(mine);
    await store.put("gone", 1);
    expect(await store.delete("gone")).toBe(true);
    expect(await store.delete("gone")).toBe(false);
    await expect(store.put("", 1)).rejects.toThrow("non-empty");
    await expect(store.put("x".repeat(300), 1)).rejects.toThrow("maximum is 256");
    await expect(store.put("big", "x".repeat(1024 * 1024 + 1))).rejects.toThrow("maximum is 1048576");
  });

  test("the store piece works on it", async () => {
    const ctx = fakeContext({ key: "counter", value: 7 });
    ctx.store = of(mine);
    const actions = builtinRegistry().get("store")!.actions;
    await actions.put.run(ctx);
    expect(await actions.get.run({ ...ctx, config: { key: "counter" } })).toEqual({ key: "counter", found: true, value: 7 });
    expect(await actions.append.run({ ...ctx, config: { key: "seen", value: "a" } })).toEqual({ key: "seen", length: 1 });
    expect(await actions.delete.run({ ...ctx, config: { key: "counter" } })).toEqual({ key: "counter", deleted: true });
  });
});
