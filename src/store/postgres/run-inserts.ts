/**
 * Runs inserted inside a unit on PostgreSQL (../run-inserts.ts): the run writer's own statements
 * (./run-batches.ts) for the definition and the row, sent on the unit's connection, so they commit with it.
 */
import type { RunInsertRepository } from "../run-inserts";
import { CompactLayout, namesOf } from "../run-layout";
import { RUN_INDEX, type RunRow, runValues } from "../run-rows";
import type { PostgresConnection } from "./connection";
import { PostgresRunBatches, RUN_COLUMN_TYPES, STEP_COLUMN_TYPES } from "./run-batches";
import type { PostgresRunNames } from "./run-names";

export class PostgresRunInserts implements RunInsertRepository {
  private readonly batches: PostgresRunBatches;

  constructor(
    private readonly c: PostgresConnection,
    private readonly names: PostgresRunNames,
  ) {
    const types = { runs: RUN_COLUMN_TYPES, steps: STEP_COLUMN_TYPES, layout: new CompactLayout(names), names };
    // Compiling only: the statements are sent below, on this repository's connection.
    this.batches = new PostgresRunBatches(() => Promise.reject(new Error("compile only")), types);
  }

  async insert(row: RunRow, definition: { hash: string; text: string }): Promise<void> {
    const values = runValues(row);
    await this.names.load(namesOf([values], RUN_INDEX));
    for (const statement of this.batches.compile([
      [4, definition.hash, definition.text],
      [0, values],
    ])) {
      await this.c.run(statement.text, statement.params);
    }
  }
}
