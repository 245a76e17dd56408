/**
 * The keys of run_names (../run-layout.ts) for the run writer on PostgreSQL: a look-up is a round trip, so a
 * batch's names are read in one awaited query before the batch is encoded (`load`), the new ones stored in
 * one more and read back, and encoding then finds every key remembered. Stored outside any transaction, so a
 * key a batch holds is committed whatever becomes of the batch; a name another instance stored meanwhile is
 * read back all the same.
 */
import { BoundedMap } from "../../lib/bounded-map";
import { NAMED, type RunNames } from "../run-layout";
import type { PostgresConnection } from "./connection";

/**
 * Keys remembered: at least half as many, the most recently used (a name's key never changes). A batch's keys,
 * read before it is encoded, outlive the read by far more than a batch holds (two generations: lib/bounded-map.ts).
 */
const REMEMBERED = 100_000;

export class PostgresRunNames implements RunNames {
  private keys = new BoundedMap<string, number>(REMEMBERED);
  private names = new BoundedMap<number, string>(REMEMBERED);

  constructor(private readonly c: PostgresConnection) {}

  /** Reads the keys of `names` not remembered yet, storing the names that have none. */
  async load(names: Iterable<string>): Promise<void> {
    const wanted = [...names].filter((name) => !this.keys.has(name));
    if (wanted.length === 0) return;
    await this.read(wanted);
    const missing = wanted.filter((name) => !this.keys.has(name));
    if (missing.length === 0) return;
    await this.c.run("INSERT INTO run_names (name) SELECT jsonb_array_elements_text($1::text::jsonb) ON CONFLICT (name) DO NOTHING", [JSON.stringify(missing)]);
    await this.read(missing);
  }

  /** Reads the keys of `names` not remembered yet, storing none (a reader's look-up: a name never stored has no key). */
  async loadStored(names: Iterable<string>): Promise<void> {
    const wanted = [...new Set(names)].filter((name) => !this.keys.has(name));
    if (wanted.length > 0) await this.read(wanted);
  }

  private async read(names: string[]): Promise<void> {
    const rows = await this.c.all<{ key: number; name: string }>(
      "SELECT key, name FROM run_names WHERE name IN (SELECT jsonb_array_elements_text($1::text::jsonb))",
      [JSON.stringify(names)],
    );
    for (const row of rows) this.remember(row.name, row.key);
  }

  /** Reads the names of the keys rows read back hold (in their named columns) that are not remembered yet. */
  async loadKeys(rows: Iterable<object>): Promise<void> {
    const wanted = new Set<number>();
    for (const row of rows) {
      for (const column of NAMED) {
        const key = (row as Record<string, unknown>)[column];
        if (typeof key === "number" && !this.names.has(key)) wanted.add(key);
      }
    }
    if (wanted.size === 0) return;
    const found = await this.c.all<{ key: number; name: string }>(
      "SELECT key, name FROM run_names WHERE key IN (SELECT jsonb_array_elements_text($1::text::jsonb)::bigint)",
      [JSON.stringify([...wanted])],
    );
    for (const row of found) this.remember(row.name, row.key);
  }

  find(name: string): number | undefined {
    return this.keys.get(name);
  }

  key(name: string): number {
    const key = this.keys.recall(name);
    if (key === undefined) throw new Error(`the key of run name ${JSON.stringify(name)} was not read before its batch was encoded`);
    return key;
  }

  name(key: number): string {
    const name = this.names.recall(key);
    if (name === undefined) throw new Error(`run name key ${key} was not read before its row was decoded`);
    return name;
  }

  private remember(name: string, key: number): void {
    this.keys.set(name, key);
    this.names.set(key, name);
  }

  forget(): void {
    this.keys = new BoundedMap(REMEMBERED);
    this.names = new BoundedMap(REMEMBERED);
  }
}
