/**
 * The run writer's batches on PostgreSQL (./writer.ts): a batch of the engine's
 * write ops becomes a handful of multi-row statements, sent together in one transaction, instead of one
 * statement and one round trip per op. On SQLite, where a statement costs microseconds in-process, the ops
 * are applied one by one (../sqlite/run-writers.ts, applyWireOp); here each round trip costs more than the work.
 *
 * A batch is compiled in order into segments. Within a segment:
 * - definitions, dictionaries, then runs, then steps are inserted (a run's row after its definition and the
 *   dictionary of its record, a step after its run);
 * - a patch of a run inserted in the same segment is merged into the inserted row, and an update of a step
 *   inserted there into the step's row: a run that started and ended within one batch is written once, as
 *   it ended (the engine already does this when the run ends before its insert is taken); a run inserted
 *   finished arrives with its steps and cold columns in its record (op 10, ./record-dictionaries.ts) and has
 *   no step rows;
 * - the patches of one run are merged in order (later fields win), then applied as one UPDATE per set of
 *   columns, in id order (two instances' writers lock rows in the same order);
 * - step updates keep the last one per step (each writes every column it sets).
 * An op that must see the effect of an earlier op of a later kind (a run inserted after a patch to that id,
 * a step inserted twice) ends the segment first; deletes and the definitions prune end it too, so the
 * result is that of applying the ops one by one. Rows travel as one JSON array per statement
 * (`jsonb_array_elements`), each value cast to its column's type (RUN_COLUMN_TYPES, STEP_COLUMN_TYPES).
 *
 * The counters that follow runs (migration 15) are statement triggers, so a batch adds to each counter once.
 */
import type { SQL } from "bun";
import {
  DELETE_ORPHAN_DEFINITIONS,
  DICTIONARY_GRACE_MS,
  deleteOrphanDictionaries,
  RUN_COLUMNS,
  RUN_INDEX,
  STEP_COLUMNS,
  STEP_UPDATE_COLUMNS,
  type RowValues,
  type RunPatch,
  type StepRow,
} from "../run-rows";
import type { AnnouncedDictionary, UnsavedCell, WireOp } from "../run-writes";
import { CompactLayout, namesOf, type RunLayout } from "../run-layout";
import { PostgresConnection } from "./connection";
import { PostgresRunNames } from "./run-names";
import { type Failure, failureOf } from "../storage-errors";
import { commitStatements, type Statement } from "./transaction";

/** PostgreSQL chose this transaction to break a deadlock (40P01) or could not serialise it: running it again is right. */
const TRANSIENT = /deadlock detected|could not serialize access/;

/** A value as a row's JSON carries it: booleans as 1/0 (the columns are numbers), undefined as NULL. */
function bindable(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value === undefined) return null;
  return value;
}

/** Where a statement takes its rows: one JSON array, its only parameter (renumbered when statements are joined). */
const ROWS = "$1::text::jsonb";

/** Column name → its type as a cast (`bigint`, `text`, …), per table. */
type ColumnTypes = ReadonlyMap<string, string>;

/** A run's values with a patch applied (fields the patch leaves undefined keep their value). */
function patched(values: RowValues, patch: RunPatch): RowValues {
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const at = RUN_INDEX.get(key);
    if (at === undefined) throw new Error(`runs has no column "${key}"`);
    values[at] = value as RowValues[number];
  }
  return values;
}

/** A run is inserted with its packed steps (null unless packed) after its other columns. */
const RUN_INSERT_COLUMNS = [...RUN_COLUMNS, "packed_steps"];
const STEP_INDEX = new Map<string, number>(STEP_COLUMNS.map((c, i) => [c, i]));
const STEP_RUN = STEP_INDEX.get("run_id")!;
const STEP_ID = STEP_INDEX.get("id")!;
const stepKey = (runId: unknown, id: unknown) => `${runId}\u0000${id}`;

/** The ops of one segment, gathered before they become statements. */
class Segment {
  readonly definitions = new Map<string, string>();
  readonly runs = new Map<string, RowValues>();
  readonly steps = new Map<string, RowValues>();
  readonly stepUpdates = new Map<string, StepRow>();
  readonly patches = new Map<string, RunPatch>();
  readonly dictionaries = new Map<string, AnnouncedDictionary>();

  get empty() {
    return this.definitions.size + this.dictionaries.size + this.runs.size + this.steps.size + this.stepUpdates.size + this.patches.size === 0;
  }
}

/**
 * How runs are stored: each column's type as a cast, of runs and of run_steps, and how the searched
 * columns are stored (../run-layout.ts).
 */
export interface RunColumnTypes {
  runs: ColumnTypes;
  steps: ColumnTypes;
  /** How rows are encoded (../run-layout.ts), with `names`' keys. */
  layout: RunLayout;
  /** The names' keys, read ahead of each batch (./run-names.ts). */
  names: PostgresRunNames;
}

/** Each column's type: the type `byType` lists it under, else text. */
function typed(columns: readonly string[], byType: Record<string, string[]>): ReadonlyMap<string, string> {
  const typeOf = new Map(Object.entries(byType).flatMap(([type, names]) => names.map((name) => [name, type] as const)));
  return new Map(columns.map((column) => [column, typeOf.get(column) ?? "text"]));
}

/**
 * The columns of runs and run_steps with their types, as PostgreSQL's migrations (1–21) leave them; a
 * migration that changes one changes these (test/store/postgres-schema.test.ts compares them with the
 * catalog). Known here rather than read from the catalog at start: that read was ~3 ms of every start.
 */
export const RUN_COLUMN_TYPES = typed([...RUN_INSERT_COLUMNS, "seq"], {
  bigint: ["seq", "started_at", "duration_ms"],
  integer: [
    "event_seq",
    "workspace_id",
    "workflow_id",
    "trigger_type",
    "definition_hash",
    "step_total",
    "step_failed",
    "version_number",
    "executed_version_number",
  ],
  smallint: ["status", "environment", "depth"],
  bytea: ["packed_steps"],
});
export const STEP_COLUMN_TYPES = typed([...STEP_COLUMNS, "rowid"], {
  bigint: ["seq", "retry_count", "duration_ms", "rowid"],
  integer: ["output_truncated"],
});

/**
 * The types the batches cast each column's JSON text to, and the layout their rows are encoded with, whose
 * names' keys are read on `pool` (the storage port's) ahead of each batch.
 */
export function runColumnTypes(pool: SQL): RunColumnTypes {
  const names = new PostgresRunNames(new PostgresConnection(pool));
  return { runs: RUN_COLUMN_TYPES, steps: STEP_COLUMN_TYPES, layout: new CompactLayout(names), names };
}

/** Where a batch's statements are committed, as one transaction. */
type Commit = (statements: Statement[]) => Promise<void>;

export class PostgresRunBatches {
  /**
   * `connection` (folds the counts, closed with the batches) is the writer's own, `max: 1`; without one the
   * statements go to `commit` alone (a reserved connection of the storage port's pool, until a lane is open: writer.ts).
   */
  constructor(
    private readonly commit: Commit,
    private readonly types: RunColumnTypes,
    private readonly connection: SQL | null = null,
  ) {}

  /** Batches committed on a connection of their own (`max: 1`): BEGIN … COMMIT are sent on it. */
  static on(sql: SQL, types: RunColumnTypes): PostgresRunBatches {
    return new PostgresRunBatches((statements) => commitStatements(sql, statements), types, sql);
  }

  close(): Promise<void> {
    return this.connection?.close() ?? Promise.resolve();
  }

  /**
   * Folds the counts' changes into their totals (migration 15), so the rows a count sums stay few. Another
   * instance folding at the same moment makes this one skip (it folds those too). Only on a connection of
   * the writer's own.
   */
  async fold(): Promise<void> {
    const sql = this.connection;
    if (sql) await retried(() => sql.unsafe("SELECT weft_fold_run_counts()"));
  }

  /**
   * Applies a batch (one group of ops per writer) in one transaction; if it fails, each group alone, so one
   * bad op cannot sink the others. Answers the failures, as applyBatch does on SQLite.
   */
  async apply(groups: WireOp[][]): Promise<Array<Failure | null>> {
    try {
      // The keys of the batch's names not known yet, in one round trip: encoding then finds them all.
      await this.types.names.load(namesOf(runValues(groups), RUN_INDEX));
      await this.transact(this.compile(groups.flat()));
      return groups.map(() => null);
    } catch (error) {
      if (groups.length === 1) return [failureOf(error)];
      const failures: Array<Failure | null> = [];
      for (const group of groups) {
        try {
          await this.types.names.load(namesOf(runValues([group]), RUN_INDEX));
          await this.transact(this.compile(group));
          failures.push(null);
        } catch (groupError) {
          failures.push(failureOf(groupError));
        }
      }
      return failures;
    }
  }

  private async transact(statements: Statement[]): Promise<void> {
    if (statements.length > 0) await retried(() => this.commit(statements));
  }

  /** The statements that apply `ops` in order (see the file's comment). */
  compile(ops: WireOp[]): Statement[] {
    const out: Statement[] = [];
    let segment = new Segment();
    // Runs counted without their row (op 11), summed per cell: one statement after the batch's other writes.
    const unsaved = new Map<string, [...UnsavedCell, number]>();
    const flush = () => {
      if (!segment.empty) out.push(...this.statementsOf(segment));
      segment = new Segment();
    };
    for (const op of ops) {
      switch (op[0]) {
        case 0:
        case 10: {
          const id = String(op[1][0]);
          if (segment.runs.has(id) || segment.patches.has(id)) flush();
          // The run's values as stored (../run-layout.ts) and its record (record-dictionaries.ts), as base64 in the
          // JSON that carries the rows.
          const values = this.types.layout.encodeRow(op[1], RUN_INDEX, false); // a copy: the record goes after it
          values.push(op[0] === 10 ? Buffer.from(op[2]).toString("base64") : null);
          segment.runs.set(id, values);
          if (op[0] === 10 && op[3]) segment.dictionaries.set(op[3].id, op[3]);
          break;
        }
        case 8:
          throw new Error("a finished run reaches PostgreSQL's writer as op 10 (record-dictionaries.ts)");
        case 1: {
          const key = stepKey(op[1][STEP_RUN], op[1][STEP_ID]);
          if (segment.steps.has(key) || segment.stepUpdates.has(key)) flush();
          segment.steps.set(key, op[1].slice());
          break;
        }
        case 2: {
          const row = op[1];
          const key = stepKey(row.run_id, row.id);
          const inserted = segment.steps.get(key);
          if (inserted) for (const c of STEP_UPDATE_COLUMNS) inserted[STEP_INDEX.get(c)!] = row[c];
          else segment.stepUpdates.set(key, row);
          break;
        }
        case 3: {
          const [, id, written] = op;
          const patch = written.status === undefined ? written : { ...written, status: this.types.layout.status(written.status) as never };
          const inserted = segment.runs.get(id);
          if (inserted) patched(inserted, patch);
          else segment.patches.set(id, { ...segment.patches.get(id), ...definedOnly(patch) });
          break;
        }
        case 4:
          if (!segment.definitions.has(op[1])) segment.definitions.set(op[1], op[2]);
          break;
        case 5:
          flush();
          out.push(
            { text: DELETE_ORPHAN_DEFINITIONS, params: [] },
            { text: deleteOrphanDictionaries(new Date(Date.now() - DICTIONARY_GRACE_MS).toISOString()), params: [] },
          );
          break;
        case 6:
          flush();
          if (op[1].length === 0) break;
          out.push(
            { text: `DELETE FROM run_steps WHERE run_id IN (SELECT jsonb_array_elements_text(${ROWS}))`, params: [JSON.stringify(op[1])] },
            { text: `DELETE FROM runs WHERE id IN (SELECT jsonb_array_elements_text(${ROWS}))`, params: [JSON.stringify(op[1])] },
          );
          break;
        case 7:
          // Returning free pages is SQLite's; PostgreSQL's autovacuum does it.
          break;
        case 9:
          // Not sent here (packFinishedRuns without onFinish): a finished run's step rows stay rows.
          break;
        case 11: {
          const key = op[1].join("\u0000");
          const counted = unsaved.get(key);
          if (counted) counted[6]++;
          else unsaved.set(key, [...op[1], 1]);
          break;
        }
        case 12:
          flush();
          out.push({ text: "DELETE FROM run_steps WHERE run_id = $1", params: [op[1]] });
          break;
      }
    }
    flush();
    if (unsaved.size > 0) {
      // In this transaction's slot (migration 026): no other lane's transaction writes the same rows.
      out.push({
        text: `INSERT INTO run_unsaved AS u (workspace_id, workflow_id, hour, environment, trigger_type, status, n, slot)
          SELECT x->>0, x->>1, (x->>2)::bigint, x->>3, x->>4, x->>5, (x->>6)::bigint, txid_current() FROM jsonb_array_elements(${ROWS}) AS x
          ON CONFLICT (workspace_id, hour, environment, workflow_id, status, trigger_type, slot) DO UPDATE SET n = u.n + EXCLUDED.n`,
        params: [JSON.stringify([...unsaved.values()])],
      });
    }
    return out;
  }

  /** A segment's statements as one: a statement is atomic, so a batch of one segment needs no BEGIN and COMMIT. */
  private statementsOf(segment: Segment): Statement[] {
    const parts = this.partsOf(segment);
    if (parts.length <= 1) return parts;
    // Data-modifying WITH clauses: none touches a row another one does (the segment merged those), and the
    // statement triggers fire once the whole statement ran.
    const params: unknown[] = [];
    const numbered = parts.map((part) => {
      params.push(...part.params);
      return part.text.replaceAll(ROWS, `$${params.length}::text::jsonb`);
    });
    const last = numbered.pop()!;
    return [{ text: `WITH ${numbered.map((text, i) => `w${i} AS (${text})`).join(", ")} ${last}`, params }];
  }

  private partsOf(segment: Segment): Statement[] {
    const out: Statement[] = [];
    if (segment.definitions.size > 0) {
      const now = new Date().toISOString();
      const rows = [...segment.definitions].map(([hash, text]) => [hash, text, now]);
      out.push({
        text: `INSERT INTO run_definitions (hash, definition, created_at) SELECT x->>0, x->>1, x->>2 FROM jsonb_array_elements(${ROWS}) AS x ON CONFLICT DO NOTHING`,
        params: [JSON.stringify(rows)],
      });
    }
    if (segment.dictionaries.size > 0) {
      // Before the runs whose records need them; in id order (two writers upserting the same rows take their
      // locks in one order).
      const now = new Date().toISOString();
      const rows = [...segment.dictionaries.values()]
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map((d) => [d.id, d.definitionHash, Buffer.from(d.bytes).toString("base64"), now]);
      out.push({
        text: `INSERT INTO run_dictionaries (id, definition_hash, bytes, seen_at) SELECT x->>0, x->>1, decode(x->>2, 'base64'), x->>3
          FROM jsonb_array_elements(${ROWS}) AS x ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`,
        params: [JSON.stringify(rows)],
      });
    }
    if (segment.runs.size > 0) out.push(insertRows("runs", RUN_INSERT_COLUMNS, this.types.runs, [...segment.runs.values()]));
    if (segment.steps.size > 0) out.push(insertRows("run_steps", STEP_COLUMNS, this.types.steps, [...segment.steps.values()]));
    if (segment.stepUpdates.size > 0) {
      const rows = [...segment.stepUpdates.values()].map((row) => [row.run_id, row.id, ...STEP_UPDATE_COLUMNS.map((c) => bindable(row[c]))]);
      const sets = STEP_UPDATE_COLUMNS.map((c, i) => `${c} = ${cast(`x->>${i + 2}`, this.types.steps.get(c))}`).join(", ");
      out.push({
        text: `UPDATE run_steps AS s SET ${sets} FROM jsonb_array_elements(${ROWS}) AS x WHERE s.run_id = x->>0 AND s.id = x->>1`,
        params: [JSON.stringify(rows)],
      });
    }
    // One UPDATE per set of columns patched, each in id order.
    const bySignature = new Map<string, Array<[string, RunPatch]>>();
    for (const [id, patch] of [...segment.patches].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const keys = Object.keys(patch).sort();
      if (keys.length === 0) continue;
      const signature = keys.join(",");
      const list = bySignature.get(signature);
      if (list) list.push([id, patch]);
      else bySignature.set(signature, [[id, patch]]);
    }
    for (const [signature, list] of bySignature) {
      const keys = signature.split(",");
      for (const key of keys) if (!RUN_INDEX.has(key)) throw new Error(`runs has no column "${key}"`);
      const rows = list.map(([id, patch]) => [id, ...keys.map((k) => bindable((patch as Record<string, unknown>)[k]))]);
      const sets = keys.map((k, i) => `${k} = ${cast(`x->>${i + 1}`, this.types.runs.get(k))}`).join(", ");
      out.push({
        text: `UPDATE runs AS r SET ${sets} FROM jsonb_array_elements(${ROWS}) AS x WHERE r.id = x->>0`,
        params: [JSON.stringify(rows)],
      });
    }
    return out;
  }
}

/** The values of the runs the groups insert. */
function* runValues(groups: WireOp[][]): Generator<RowValues> {
  for (const group of groups) for (const op of group) if (op[0] === 0 || op[0] === 10) yield op[1];
}

/** A patch without its undefined fields (they mean "unchanged", and must not override an earlier patch). */
function definedOnly(patch: RunPatch): RunPatch {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) out[key] = value;
  return out as RunPatch;
}

/** `expression` (text from JSON) as a value of a column of type `type`. */
function cast(expression: string, type: string | undefined): string {
  if (type === undefined) throw new Error(`unknown column type for ${expression}`);
  if (type === "bytea") return `decode(${expression}, 'base64')`;
  return type === "text" ? expression : `(${expression})::${type}`;
}

/** One INSERT of many rows, kept in the order given (run_steps' identity column numbers them in it). */
function insertRows(table: string, columns: readonly string[], types: ColumnTypes, rows: RowValues[]): Statement {
  const values = columns.map((c, i) => cast(`e.x->>${i}`, types.get(c))).join(", ");
  return {
    text: `INSERT INTO ${table} (${columns.join(", ")}) SELECT ${values} FROM jsonb_array_elements(${ROWS}) WITH ORDINALITY AS e(x, i) ORDER BY e.i`,
    params: [JSON.stringify(rows.map((row) => row.map(bindable)))],
  };
}

/**
 * Runs a transaction again when PostgreSQL aborted it to break a deadlock with another instance's writer
 * (both add to the same counter rows), up to three times in all.
 */
async function retried(work: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await work();
      return;
    } catch (error) {
      if (attempt >= 3 || !TRANSIENT.test(message(error))) throw error;
    }
  }
}

const message = (error: unknown) => String((error as Error)?.message ?? error);
