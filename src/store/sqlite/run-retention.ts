/** Run retention's questions on SQLite (../run-retention.ts says what each answers): the RunStore's statements, in-process. */
import type { Database } from "bun:sqlite";
import { ensureIncrementalVacuum, freePages } from "./maintenance";
import type { RunRetentionRepository } from "../run-retention";
import type { RunPosition } from "../run-rows";
import { RunStore } from "./run-store";
import type { SqliteConnection } from "./connection";

/** One store per connection, made on first use (it prepares its statements once). */
const stores = new WeakMap<Database, RunStore>();

export class SqliteRunRetention implements RunRetentionRepository {
  constructor(private readonly c: SqliteConnection) {}

  private get store(): RunStore {
    let store = stores.get(this.c.db);
    if (!store) {
      store = new RunStore(this.c.db);
      stores.set(this.c.db, store);
    }
    return store;
  }

  runCountsByWorkflow() {
    return this.c.do(() => this.store.runCountsByWorkflow());
  }

  oldestFinishedOf(workflowId: string, limit: number, beforeIso?: string, after?: RunPosition) {
    return this.c.do(() => this.store.oldestFinishedOf(workflowId, limit, beforeIso, after));
  }

  oldestFinishedIn(workspaceId: string, exceptWorkflows: string[], limit: number, after?: RunPosition) {
    return this.c.do(() => this.store.oldestFinishedIn(workspaceId, exceptWorkflows, limit, after));
  }

  unfinishedPositions() {
    return this.c.do(() => this.store.unfinishedPositions());
  }

  freePages() {
    return this.c.do(() => freePages(this.c.db));
  }

  ensureIncrementalVacuum(maxBytes: number) {
    return this.c.do(() => ensureIncrementalVacuum(this.c.db, maxBytes));
  }
}
