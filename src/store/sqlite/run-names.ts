/**
 * The keys of run_names (../run-layout.ts) on a SQLite connection, and the layout of the connection's runs
 * (`runLayout`): each look-up is a statement of microseconds, so a key is looked up, or stored, when it is
 * needed. Keys are remembered per connection; a key learned inside a transaction only by a writer that forgets
 * what it remembers whenever a transaction fails (../run-layout.ts says why).
 */
import type { Statement } from "bun:sqlite";
import type { Db } from "../db";
import { CompactLayout, type RunLayout, type RunNames } from "../run-layout";

/** Names' keys on one SQLite connection. */
class SqliteRunNames implements RunNames {
  private readonly keys = new Map<string, number>();
  private readonly names = new Map<number, string>();
  private readonly findStmt: Statement<{ key: number }>;
  private readonly nameStmt: Statement<{ name: string }>;
  private readonly addStmt: Statement;

  constructor(private readonly db: Db) {
    this.findStmt = db.prepare("SELECT key FROM run_names WHERE name = ?");
    this.nameStmt = db.prepare("SELECT name FROM run_names WHERE key = ?");
    this.addStmt = db.prepare("INSERT INTO run_names (name) VALUES (?) ON CONFLICT (name) DO NOTHING");
  }

  find(name: string): number | undefined {
    const known = this.keys.get(name);
    if (known !== undefined) return known;
    const key = this.findStmt.get(name)?.key;
    if (key !== undefined && !this.db.inTransaction) this.remember(name, key);
    return key;
  }

  key(name: string, forgetsOnFailure: boolean): number {
    const known = this.keys.get(name);
    if (known !== undefined) return known;
    if (typeof name !== "string") throw new Error(`a run's workspace, workflow, trigger type and definition are text; got ${JSON.stringify(name)}`);
    let key = this.findStmt.get(name)?.key;
    if (key === undefined) {
      this.addStmt.run(name);
      key = this.findStmt.get(name)!.key;
    }
    if (forgetsOnFailure || !this.db.inTransaction) this.remember(name, key);
    return key;
  }

  name(key: number): string {
    const known = this.names.get(key);
    if (known !== undefined) return known;
    const name = this.nameStmt.get(key)?.name;
    if (name === undefined) throw new Error(`run_names holds no key ${key}`);
    if (!this.db.inTransaction) this.remember(name, key);
    return name;
  }

  private remember(name: string, key: number): void {
    if (this.keys.size >= 50_000) this.forget();
    this.keys.set(name, key);
    this.names.set(key, name);
  }

  forget(): void {
    this.keys.clear();
    this.names.clear();
  }
}

const layouts = new WeakMap<Db, RunLayout>();

/** The layout of a connection's runs (one per connection: its remembered keys are the connection's). */
export function runLayout(db: Db): RunLayout {
  let layout = layouts.get(db);
  if (!layout) {
    layout = new CompactLayout(new SqliteRunNames(db));
    layouts.set(db, layout);
  }
  return layout;
}
