/**
 * How the searched columns of a run are stored (issue 19, "less disk per run"). On SQLite (migration 018) a
 * run row and each of its three list index entries hold small integers where the API has text:
 * - workspace_id, workflow_id, trigger_type and definition_hash: the key of the text in run_names (each text
 *   stored once; a key is never reused, a name never deleted);
 * - status and environment: fixed codes (STATUS_CODES, ENVIRONMENT_CODES);
 * - started_at: milliseconds since the epoch (the engine writes canonical ISO times; any other text is refused);
 * - ties of started_at are broken by the row's sequence number (`seq`, its rowid), which every index entry
 *   holds anyway, instead of the 36-character id. A list page follows its index's order exactly (started_at,
 *   then the filter columns the index holds, then seq): a sort of the runs of one start by seq alone would
 *   cost a deep page ~6 times as much (16 against 2.7 ms for 100,000 skipped runs).
 * run_counts, run_hours (hour: started_at / 3,600,000) and run_tags hold the same values. PostgreSQL stores them
 * the same way since its migration 19 (postgres/migrations/019-compact-runs-postgres.ts), `seq` an identity column there; the
 * queries take the values of `RunLayout`, so only this file (and the migrations) knows how a column is stored.
 *
 * Keys are remembered per connection. A key of a name whose insert was rolled back may be given to another
 * name, so a key learned inside a transaction is remembered only by a writer that forgets what it remembers
 * whenever a transaction fails (sqlite/run-store.ts, forgetWrites; the run writer's batches); any other is
 * remembered only when learned outside a transaction, where every name it read or stored is committed.
 */
import { canonicalMs, type RowValues } from "./run-records";

/** Status codes of stored runs (SQLite's migration 018, PostgreSQL's 19). Never renumber: stored rows and the partial index hold them. */
export const STATUS_CODES = { completed: 0, failed: 1, cancelled: 2, pending: 3, running: 4, paused: 5 } as const;
export const ENVIRONMENT_CODES = { production: 0, test: 1 } as const;

const STATUS_NAMES = invert(STATUS_CODES);

/** The status a stored code stands for (run_counts, run_hours, run_durations hold codes). */
export const statusName = (code: Stored): string => STATUS_NAMES[Number(code)] ?? String(code);
const ENVIRONMENT_NAMES = invert(ENVIRONMENT_CODES);

function invert(codes: Record<string, number>): string[] {
  const names: string[] = [];
  for (const [name, code] of Object.entries(codes)) names[code] = name;
  return names;
}

/** A stored value of a searched column (an integer; a tie is bound as text in a list position). */
export type Stored = string | number;

export interface RunLayout {
  /** The column that orders runs started in the same millisecond, last (in every list index); unique. */
  readonly tie: "seq" | "id";
  /** The list's order by start (the list indexes' order), `direction` ASC or DESC. */
  startOrder(direction: "ASC" | "DESC"): string;
  /** sort=duration: longest first, runs without a duration last (runs_workspace_duration's order). */
  readonly durationOrder: string;
  /** SQL list of the unfinished statuses, for `status IN (…)`. */
  readonly unfinished: string;
  /** SQL literal of status paused. */
  readonly paused: string;
  status(status: string): Stored;
  environment(environment: string): Stored;
  time(iso: string): Stored;
  /** The stored key of a name (workspace, workflow, trigger type); undefined when no run was ever stored with it. */
  find(name: string): Stored | undefined;
  /**
   * A row's values in RUN_COLUMNS order (`columns`: each column's place), as stored, in a new array; names new
   * here are stored. `forgetsOnFailure`: the caller forgets the connection's remembered writes when its transaction fails.
   */
  encodeRow(values: RowValues, columns: ReadonlyMap<string, number>, forgetsOnFailure: boolean): RowValues;
  /** A row read back (any of the run columns), with its text values in place of the stored ones. */
  decode<Row extends object>(row: Row): Row;
  /** A value of run_hours.hour as bounds on started_at: from ≤ started_at < to. */
  hourBounds(hour: Stored): { from: Stored; to: Stored };
  /** Bounds on started_at that every run is within. */
  readonly allTime: { from: Stored; to: Stored };
  /** A stored tie value as text that sorts in the same order (RunPosition.tie). */
  tieText(value: Stored): string;
  /** The reverse of tieText, to bind ("" comes before any run). */
  tieValue(text: string): Stored;
  /** Forgets the keys learned while writing (the transaction may have been rolled back). */
  forgetWrites(): void;
  /** How the names' keys are looked up and remembered (RunNames). */
  readonly names: RunNames;
}

const HOUR_MS = 3_600_000;

/** The columns whose text is a name of run_names. */
export const NAMED = ["workspace_id", "workflow_id", "trigger_type", "definition_hash"] as const;

/**
 * The keys of run_names, remembered: on SQLite looked up (and stored) as they are needed (sqlite/run-names.ts);
 * on PostgreSQL, where a look-up is a round trip, the run writer reads a batch's names in one awaited
 * query before it encodes the batch (postgres/run-names.ts).
 */
export interface RunNames {
  /** The key of a name, undefined when none is stored. */
  find(name: string): number | undefined;
  /** The key of `name`, stored if new. `forgetsOnFailure`: see RunLayout.encodeRow. */
  key(name: string, forgetsOnFailure: boolean): number;
  /** The name of a stored key. */
  name(key: number): string;
  /** Forgets every key remembered. */
  forget(): void;
}

/** The names (of run_names) that rows of run values hold, `columns` giving each column's place. */
export function namesOf(rows: Iterable<RowValues>, columns: ReadonlyMap<string, number>): Set<string> {
  const places = NAMED.map((column) => columns.get(column)!);
  const names = new Set<string>();
  for (const values of rows) {
    for (const at of places) {
      const name = values[at];
      if (typeof name === "string") names.add(name);
    }
  }
  return names;
}

export class CompactLayout implements RunLayout {
  readonly tie = "seq";
  readonly durationOrder = "duration_ms DESC NULLS LAST, environment DESC, seq DESC";
  readonly allTime = { from: Number.MIN_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER };
  readonly unfinished = `${STATUS_CODES.pending}, ${STATUS_CODES.running}, ${STATUS_CODES.paused}`;
  readonly paused = String(STATUS_CODES.paused);

  constructor(readonly names: RunNames) {}

  startOrder(direction: "ASC" | "DESC"): string {
    return ["started_at", "environment", "status", "trigger_type", "seq"].map((column) => `${column} ${direction}`).join(", ");
  }

  status(status: string): number {
    const code = (STATUS_CODES as Record<string, number>)[status];
    if (code === undefined) throw new Error(`a run's status must be one of ${Object.keys(STATUS_CODES).join(", ")}; got ${JSON.stringify(status)}`);
    return code;
  }

  environment(environment: string): number {
    const code = (ENVIRONMENT_CODES as Record<string, number>)[environment];
    if (code === undefined) throw new Error(`a run's environment must be production or test; got ${JSON.stringify(environment)}`);
    return code;
  }

  time(iso: string): number {
    const ms = canonicalMs(iso);
    if (ms === undefined) throw new Error(`a run's start must be a canonical ISO time (as Date.toISOString writes it); got ${JSON.stringify(iso)}`);
    return ms;
  }

  find(name: string): number | undefined {
    return this.names.find(name);
  }

  encodeRow(values: RowValues, columns: ReadonlyMap<string, number>, forgetsOnFailure: boolean): RowValues {
    const row = values.slice();
    for (const column of NAMED) {
      const at = columns.get(column)!;
      row[at] = this.names.key(values[at] as string, forgetsOnFailure);
    }
    const status = columns.get("status")!;
    row[status] = this.status(values[status] as string);
    const environment = columns.get("environment")!;
    row[environment] = this.environment(values[environment] as string);
    const started = columns.get("started_at")!;
    row[started] = this.time(values[started] as string);
    return row;
  }

  decode<Row extends object>(row: Row): Row {
    const values = row as Record<string, unknown>;
    for (const column of NAMED) if (typeof values[column] === "number") values[column] = this.names.name(values[column] as number);
    if (typeof values.status === "number") values.status = STATUS_NAMES[values.status];
    if (typeof values.environment === "number") values.environment = ENVIRONMENT_NAMES[values.environment];
    if (typeof values.started_at === "number") values.started_at = new Date(values.started_at).toISOString();
    return row;
  }

  hourBounds(hour: Stored): { from: number; to: number } {
    return { from: Number(hour) * HOUR_MS, to: (Number(hour) + 1) * HOUR_MS };
  }

  tieText(value: Stored): string {
    return String(value).padStart(16, "0");
  }

  tieValue(text: string): number {
    return text === "" ? 0 : Number(text);
  }

  forgetWrites(): void {
    this.names.forget();
  }
}
