/**
 * A Map that keeps the most recent insertions: at least `capacity / 2` and at most `capacity` entries.
 *
 * Two generations: inserts go to the young map; when it holds half the capacity it becomes the old one and
 * the previous old map is dropped whole. Nothing is ever deleted entry by entry on the hot path, which
 * matters in JavaScriptCore: a deleted Map entry leaves a tombstone that iteration and rehashing keep
 * paying for (`map.delete(map.keys().next().value)` cost ~1.5 µs per insert at 1,000 entries, measurable
 * on the engine's per-run path).
 */
export class BoundedMap<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly half: number;

  constructor(capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2));
  }

  get size(): number {
    return this.young.size + this.old.size;
  }

  get(key: K): V | undefined {
    const value = this.young.get(key);
    return value !== undefined || this.young.has(key) ? value : this.old.get(key);
  }

  /**
   * `get` for caches: an entry found in the older generation moves to the young one, so what is used keeps
   * surviving rotations (an LRU's promise at the cost of one Map lookup per hit).
   */
  recall(key: K): V | undefined {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const old = this.old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  has(key: K): boolean {
    return this.young.has(key) || this.old.has(key);
  }

  set(key: K, value: V): this {
    if (this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
    // A newer value replaces an older generation's copy (a key is in one generation only).
    if (this.old.size > 0) this.old.delete(key);
    return this;
  }

  delete(key: K): boolean {
    const inYoung = this.young.delete(key);
    const inOld = this.old.delete(key);
    return inYoung || inOld;
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
  }
}
