/** Runs inserted inside a unit on SQLite (../run-inserts.ts): RunStore's own statements on the unit's connection. */
import type { RunInsertRepository } from "../run-inserts";
import type { RunRow } from "../run-rows";
import { RunStore } from "./run-store";
import type { SqliteConnection } from "./connection";

export class SqliteRunInserts implements RunInsertRepository {
  /** Made on first use: its statements are prepared once per repository. */
  private made: RunStore | undefined;

  constructor(private readonly c: SqliteConnection) {}

  insert(row: RunRow, definition: { hash: string; text: string }) {
    return this.c.do(() => {
      this.made ??= new RunStore(this.c.db);
      this.made.putDefinition(definition.hash, definition.text);
      this.made.insertRun(row);
    });
  }
}
