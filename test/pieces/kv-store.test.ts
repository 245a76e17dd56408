/** The SQLite key-value store behind ctx.store: workspace-scoped, JSON values, atomic append. */
import { beforeAll, describe, expect, test } from "bun:test";
import { KvStore, workspaceKv } from "../../src/store/kv";
import { storageOf } from "../../src/store/storage";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import { testApp, type TestApp } from "../support/app";
import { fakeContext } from "./fake-context";

let t: TestApp;
let kv: KvStore;
let mine: string;
let theirs: string;
beforeAll(async () => {
  t = await testApp();
  kv = new KvStore(t.db);
  mine = (await t.req("GET", "/api/auth/me")).body.data.workspace.id;
  theirs = (await t.otherWorkspace()).workspaceId;
});

describe("KvStore", () => {
  test("values round-trip as JSON and survive a new handle", () => {
    const store = kv.forWorkspace(mine);
    store.put("obj", { a: [1, "two", null], b: true });
    store.put("n", 42);
    expect(store.get("obj")).toEqual({ a: [1, "two", null], b: true });
    expect(new KvStore(t.db).forWorkspace(mine).get("n")).toBe(42);
    expect(store.get("missing")).toBeUndefined();
    store.put("n", 43);
    expect(store.get("n")).toBe(43);
  });

  test("workspaces never see each other's keys", () => {
    kv.forWorkspace(mine).put("shared-name", "mine");
    const other = kv.forWorkspace(theirs);
    expect(other.get("shared-name")).toBeUndefined();
    expect(other.delete("shared-name")).toBe(false);
    other.put("shared-name", "theirs");
    expect(kv.forWorkspace(mine).get("shared-name")).toBe("mine");
  });

  test("append creates and extends a list; refuses a non-list", () => {
    const store = kv.forWorkspace(mine);
    expect(store.append("list", { id: 1 })).toBe(1);
    expect(store.append("list", { id: 2 })).toBe(2);
    expect(store.get("list")).toEqual([{ id: 1 }, { id: 2 }]);
    store.put("scalar", 1);
    expect(() => store.append("scalar", 2)).toThrow("not a list");
  });

  test("delete reports whether a key existed; keys are checked", () => {
    const store = kv.forWorkspace(mine);
    store.put("gone", 1);
    expect(store.delete("gone")).toBe(true);
    expect(store.delete("gone")).toBe(false);
    expect(() => store.put("", 1)).toThrow("non-empty");
    expect(() => store.put("x".repeat(300), 1)).toThrow("maximum is 256");
  });

  test("the store piece works on the SQLite store", async () => {
    const ctx = fakeContext({ key: "counter", value: 7 });
    ctx.store = kv.forWorkspace(mine);
    const actions = builtinRegistry().get("store")!.actions;
    await actions.put.run(ctx);
    expect(await actions.get.run({ ...ctx, config: { key: "counter" } })).toEqual({ key: "counter", found: true, value: 7 });
  });
});

describe("the key-value store on the storage port", () => {
  test("the same values, workspaces and append rules as the pieces' store, every answer a promise", async () => {
    const store = workspaceKv(storageOf(t.db), mine);
    await store.put("port-obj", { a: [1, "two", null] });
    expect(await store.get("port-obj")).toEqual({ a: [1, "two", null] });
    expect(kv.forWorkspace(mine).get("port-obj")).toEqual({ a: [1, "two", null] });
    expect(await workspaceKv(storageOf(t.db), theirs).get("port-obj")).toBeUndefined();
    expect(await store.append("port-list", 1)).toBe(1);
    expect(await store.append("port-list", 2)).toBe(2);
    expect(await store.get("port-list")).toEqual([1, 2]);
    await expect(store.append("port-obj", 3)).rejects.toThrow("is not a list");
    expect(await store.delete("port-list")).toBe(true);
    expect(await store.delete("port-list")).toBe(false);
    await expect(store.put("", 1)).rejects.toThrow("non-empty");
  });
});
