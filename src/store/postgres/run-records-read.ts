/**
 * Run rows and records read back on PostgreSQL (../run-layout.ts, ../run-records.ts): a record is decoded with
 * a synchronous look-up of its dictionary, so the dictionaries a batch of records needs are read first, in one
 * awaited query, and remembered (a dictionary never changes); names' keys likewise (./run-names.ts).
 */
import { CompactLayout } from "../run-layout";
import { mayHoldColdColumns, readColdColumns, readRecord, recordDictionary, type RunRecord, withCold } from "../run-records";
import type { PostgresConnection } from "./connection";
import type { PostgresRunNames } from "./run-names";

/** Dictionaries remembered at most; past it the memory starts again. */
const MAX_DICTIONARIES = 1_000;

/** A row as selected with its record (`packed_steps`). */
export type WithRecord = { id: string; packed_steps?: Uint8Array | null };

export class RunRowReader {
  readonly layout: CompactLayout;
  private readonly dictionaries = new Map<string, Uint8Array>();

  constructor(
    private readonly c: PostgresConnection,
    readonly names: PostgresRunNames,
  ) {
    this.layout = new CompactLayout(names);
  }

  /**
   * The dictionaries `records` were compressed against, as the record readers look them up: those not
   * remembered are read in one query. The look-up holds its own (another read may start the memory again meanwhile).
   */
  async dictionariesOf(records: Iterable<Uint8Array | null | undefined>): Promise<(id: string) => Uint8Array | null> {
    const found = new Map<string, Uint8Array>();
    const wanted = new Set<string>();
    for (const bytes of records) {
      const id = bytes ? recordDictionary(bytes) : null;
      if (id === null || found.has(id)) continue;
      const known = this.dictionaries.get(id);
      if (known) found.set(id, known);
      else wanted.add(id);
    }
    if (wanted.size > 0) {
      const rows = await this.c.all<{ id: string; bytes: Uint8Array }>(
        "SELECT id, bytes FROM run_dictionaries WHERE id IN (SELECT jsonb_array_elements_text($1::text::jsonb))",
        [JSON.stringify([...wanted])],
      );
      if (this.dictionaries.size + rows.length > MAX_DICTIONARIES) this.dictionaries.clear();
      for (const row of rows) {
        this.dictionaries.set(row.id, row.bytes);
        found.set(row.id, row.bytes);
      }
    }
    return (id) => found.get(id) ?? null;
  }

  /** Rows as the API has them: names and codes decoded, cold columns from each record, the record dropped. */
  async decodeAll<Row extends WithRecord>(rows: Row[]): Promise<Omit<Row, "packed_steps">[]> {
    const [, dictionary] = await Promise.all([this.names.loadKeys(rows), this.dictionariesOf(rows.map((row) => row.packed_steps))]);
    for (const row of rows) {
      const bytes = row.packed_steps;
      delete row.packed_steps;
      this.layout.decode(row);
      if (bytes && mayHoldColdColumns(bytes)) withCold(row, readColdColumns(row.id, bytes, dictionary));
    }
    return rows;
  }

  /** A run's record (its dictionary read first). */
  async record(runId: string, bytes: Uint8Array): Promise<RunRecord> {
    return readRecord(runId, bytes, await this.dictionariesOf([bytes]));
  }
}
