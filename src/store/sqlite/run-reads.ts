/**
 * The reads of runs on SQLite (../run-read-repository.ts): RunStore's own, on the process's connection when
 * it is the caller's turn (a read waits for a unit that holds the connection instead of reading inside it).
 */
import type { RunCountFilter, RunReadRepository } from "../run-read-repository";
import type { RunListFilter } from "../run-rows";
import { RunStore } from "./run-store";
import type { SqliteConnection } from "./connection";

export class SqliteRunReads implements RunReadRepository {
  /** Made on first use: its statements are prepared once per repository. */
  private made: RunStore | undefined;

  constructor(private readonly c: SqliteConnection) {}

  private get store(): RunStore {
    this.made ??= new RunStore(this.c.db);
    return this.made;
  }

  list(filter: RunListFilter) {
    return this.c.do(() => this.store.list(filter));
  }

  stepsBounded(runId: string, max: number) {
    return this.c.do(() => this.store.stepsBounded(runId, max));
  }

  getRow(id: string) {
    return this.c.do(() => this.store.getRow(id));
  }

  steps(runId: string) {
    return this.c.do(() => this.store.steps(runId));
  }

  definition(hash: string) {
    return this.c.do(() => this.store.definition(hash));
  }

  has(id: string) {
    return this.c.do(() => this.store.has(id));
  }

  lastRuns(workflowIds: string[]) {
    return this.c.do(() => this.store.lastRuns(workflowIds));
  }

  recentTriggerData(workflowId: string, triggerType: string, limit: number) {
    return this.c.do(() => this.store.recentTriggerData(workflowId, triggerType, limit));
  }

  hourCounts(filter: RunCountFilter, fromHour: number) {
    return this.c.do(() => this.store.hourCounts(filter, fromHour));
  }

  unfinished() {
    return this.c.do(() => this.store.unfinished());
  }
}
