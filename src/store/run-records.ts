/**
 * A finished run's record: its steps and the columns nobody searches, in one compressed value of its row
 * (runs.packed_steps), compressed against a dictionary shared by the runs of its definition.
 *
 * Why: a run of a webhook workflow stores the same things each time — header names, step names, piece and
 * action ids, the workflow's name and version ids — and a few values that differ. Compressed alone, a
 * three-step run with small payloads still takes ~600 bytes (the compressor starts from nothing each time);
 * compressed against an earlier run of the same definition it takes ~240, because only what differs is
 * left. The dictionary is the record of the first run of that definition the writer packed, then the first
 * DICTIONARY_RECORDS records together (zstd's raw content dictionary, node:zlib).
 *
 * Layout (FORMAT 3): byte 0 is 3; bytes 1–8 the dictionary's id (the first 8 bytes of the SHA-256 of its
 * bytes; all zero: none); then a zstd frame of the JSON `[cold, base, steps]`:
 * - `cold`: the values of COLD_COLUMNS, whose columns then hold blanks (null when the columns hold the values);
 *   finished_at is 0 when it is started_at plus duration_ms (FINISHED_IS_START_PLUS_DURATION);
 * - `base`: the first canonical start time of a step, ms; a step's start and finish are offsets from it when
 *   they are the canonical ISO text of their instant, else kept as written;
 * - `steps`: one tuple per step, STEP_COLUMNS without run_id, where
 *   - the id is null when it is the id the engine gives the step at its place (the n-th step of the record:
 *     lib/ids.ts stepIdOf(run id, n)), the number k when it is stepIdOf(run id, k), else its text — a random
 *     id took ~16 of the ~65 bytes a step of a small run is compressed to;
 *   - duration_ms is left out (the tuple is one shorter) when it is the finish's offset minus the start's.
 * FORMAT 2 (2026-11-26: ids and durations always written) is read the same way; FORMAT 1 (a zstd frame of
 * `[1, base, steps]`, no cold columns, no dictionary), from before dictionaries, is still read. Every value
 * comes back exactly as written.
 */
import { isStepIdOf, mayBeStepIdOf, stepIdOf } from "../lib/ids";
import { type ZstdCompressor, type ZstdDecompressor, type ZstdDictionary, zstdCompressor, zstdDecompressor } from "../lib/zstd";

/**
 * A row's values in the order of its insert statement's columns (every column is text, a number or null; a
 * record is bytes). Both databases bind them as they are, so the type names neither database's driver.
 */
export type RowValues = Array<string | number | bigint | boolean | null | Uint8Array>;

export interface StepRow {
  id: string;
  run_id: string;
  seq: number;
  node_id: string;
  node_type: string;
  piece_id: string | null;
  action_id: string | null;
  display_name: string | null;
  status: string;
  input_data: string | null;
  output_data: string | null;
  output_truncated: number;
  error_message: string | null;
  retry_count: number;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
}

/** The columns of run_steps, in the order of the insert statement's values (RowValues). */
export const STEP_COLUMNS = [
  "id",
  "run_id",
  "seq",
  "node_id",
  "node_type",
  "piece_id",
  "action_id",
  "display_name",
  "status",
  "input_data",
  "output_data",
  "output_truncated",
  "error_message",
  "retry_count",
  "started_at",
  "finished_at",
  "duration_ms",
] as const;

/**
 * Columns of runs a finished run keeps in its record: no query filters, sorts or counts by them, and nothing
 * changes them once the run finished (RunStore.patchRun rewrites the record if something does).
 */
export const COLD_COLUMNS = [
  "trigger_data",
  "org_id",
  "workflow_name",
  "workflow_trigger_type",
  "version_id",
  "version_number",
  "executed_version_id",
  "executed_version_number",
  "finished_at",
  "error_message",
  "started_from_step",
  "retry_of_run_id",
  "parent_run_id",
] as const;

export type ColdColumn = (typeof COLD_COLUMNS)[number];

/** What a cold column holds while the record holds its value (the columns that may not be NULL hold ''). */
export const BLANK: Record<ColdColumn, string | null> = Object.fromEntries(
  COLD_COLUMNS.map((c) => [c, c === "trigger_data" || c === "org_id" || c === "workflow_name" ? "" : null]),
) as Record<ColdColumn, string | null>;

const COLD = new Set<string>(COLD_COLUMNS);
export const isCold = (column: string): column is ColdColumn => COLD.has(column);

/** A run with more steps keeps row-per-step (its detail is read in bounded parts). */
export const MAX_PACKED_STEPS = 1_000;

/** A record larger than this (uncompressed) is not made a dictionary: its own repetitions are what compress it. */
export const MAX_DICTIONARY_BYTES = 16_384;

/** Dictionary bytes and their id (16 hex digits: the first 8 bytes of the bytes' SHA-256), as lib/zstd.ts takes them. */
export type Dictionary = ZstdDictionary;

/** A record's contents. `cold` null: the run's columns hold their own values. */
export interface RunRecord {
  cold: unknown[] | null;
  steps: StepRow[];
}

const FORMAT = 3;
/** FORMAT 2 records: read as FORMAT 3 (its tuples are the full ones, which FORMAT 3 may still write). */
const FORMAT_2 = 2;
const OLD_FORMAT = 1;
/** The length of a step tuple that holds every column but run_id; one shorter: no duration_ms. */
const TUPLE_LENGTH = STEP_COLUMNS.length - 1;
const HEADER = 9;
const NO_DICTIONARY = "0000000000000000";

const STEP = Object.fromEntries(STEP_COLUMNS.map((name, i) => [name, i])) as Record<(typeof STEP_COLUMNS)[number], number>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A record's text made a dictionary; undefined when it is too large to be one (MAX_DICTIONARY_BYTES). */
export function dictionaryFrom(text: Uint8Array): Dictionary | undefined {
  if (text.byteLength > MAX_DICTIONARY_BYTES) return undefined;
  const hash = new Bun.CryptoHasher("sha256").update(text).digest("hex");
  return { id: hash.slice(0, 16), bytes: text };
}

/**
 * Records of a definition its dictionary is made of in the end. The first record alone is the dictionary at
 * first; a first run unlike the later ones (a test call, a branch rarely taken) would then cost every later
 * run (~70 bytes each in bench/history.ts), so the first DICTIONARY_RECORDS records together replace it.
 */
export const DICTIONARY_RECORDS = 4;

/** A writer's dictionary for one definition, and the records it is being made of (null: made for good). */
export interface GrowingDictionary {
  dictionary: Dictionary | undefined;
  texts: Uint8Array[] | null;
}

/**
 * The dictionary of a definition whose first record is `text` (GrowingDictionary.dictionary undefined when
 * that record is too large to be one: the definition then has none).
 */
export function firstDictionary(text: Uint8Array): GrowingDictionary {
  const dictionary = dictionaryFrom(text);
  return { dictionary, texts: dictionary ? [text] : null };
}

/**
 * A stored dictionary taken up by a writer (SQLite's, after a restart or from another connection): one made
 * of a single record (valid JSON; several records one after the other never are) goes on growing from the
 * records this writer packs next.
 */
export function storedDictionary(dictionary: Dictionary): GrowingDictionary {
  let single = true;
  try {
    JSON.parse(decoder.decode(dictionary.bytes));
  } catch {
    single = false;
  }
  return { dictionary, texts: single ? [dictionary.bytes] : null };
}

/**
 * Takes the text of a later record of the definition; returns the new dictionary when this record completes
 * the DICTIONARY_RECORDS it is made of (the caller stores it; `grown.dictionary` is it from then on), else
 * undefined. Together too large to be one, the first record's stays.
 */
export function growDictionary(grown: GrowingDictionary, text: Uint8Array): Dictionary | undefined {
  if (!grown.texts) return undefined;
  grown.texts.push(text);
  if (grown.texts.length < DICTIONARY_RECORDS) return undefined;
  const made = dictionaryFrom(Buffer.concat(grown.texts));
  grown.texts = null;
  if (made) grown.dictionary = made;
  return made;
}

/**
 * The instant of `text` when `text` is its canonical ISO form (what the engine writes: `toISOString()`,
 * "YYYY-MM-DDTHH:MM:SS.mmmZ", years 0000–9999), else undefined. Read field by field, which answers exactly as
 * `new Date(Date.parse(text)).toISOString() === text` does (test/unit/canonical-ms.test.ts) in a fifth of the
 * time: the writer asks it seven times a three-step run (~0.3 µs a time that way).
 */
export function canonicalMs(text: unknown): number | undefined {
  if (typeof text !== "string" || text.length !== 24) return undefined;
  for (let i = 0; i < 24; i++) {
    const code = text.charCodeAt(i);
    const separator = ISO_SEPARATORS[i];
    if (separator ? code !== separator : code < 48 || code > 57) return undefined;
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return undefined;
  const ms = digits(text, 20, 3);
  // Date.UTC reads years 0–99 as 1900–1999; the calendar repeats every 400 years.
  if (year < 100) return Date.UTC(year + 400, month - 1, day, hour, minute, second, ms) - MS_400_YEARS;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

/** The character codes of "YYYY-MM-DDTHH:MM:SS.mmmZ"'s separators by place; 0 where a digit goes. */
const ISO_SEPARATORS = Array.from("0000-00-00T00:00:00.000Z", (c) => (c === "0" ? 0 : c.charCodeAt(0)));
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** 400 Gregorian years (146,097 days), ms. */
const MS_400_YEARS = 146_097 * 86_400_000;

/** The decimal number of `count` digits at `at` (checked to be digits). */
function digits(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
}

/**
 * A finished run's values (in RUN_COLUMNS order, `index` giving each column's place) split into the cold
 * values its record holds and the row to store, with blanks in their place.
 */
export function splitCold(values: RowValues, index: ReadonlyMap<string, number>): { cold: unknown[]; row: RowValues } {
  const row = values.slice();
  const cold = COLD_COLUMNS.map((c) => {
    const at = index.get(c)!;
    row[at] = BLANK[c];
    return values[at];
  });
  // A run's start is stored only in its canonical form (run-layout.ts refuses any other). A finish in canonical
  // form at the start's instant plus the duration is the text toISOString would give for it: derivable.
  const finishMs = canonicalMs(cold[COLD_FINISHED]);
  const startMs = canonicalMs(values[index.get("started_at")!]);
  const duration = values[index.get("duration_ms")!];
  if (finishMs !== undefined && startMs !== undefined && typeof duration === "number" && finishMs === startMs + duration) {
    cold[COLD_FINISHED] = FINISHED_IS_START_PLUS_DURATION;
  }
  return { cold, row };
}

/** finished_at's place among the cold values. */
const COLD_FINISHED = COLD_COLUMNS.indexOf("finished_at");

/**
 * What a record (FORMAT 3) holds for finished_at when it is the canonical ISO text of started_at plus
 * duration_ms, both of which the run's row keeps (a finish writes all three together): a number, which
 * finished_at never is. ~9 bytes a run of compressed time text.
 */
const FINISHED_IS_START_PLUS_DURATION = 0;

/**
 * Writes finished_at's text into a record's cold values (readRecord) in place of FINISHED_IS_START_PLUS_DURATION,
 * from `row`'s start and duration: a patch of started_at or duration_ms alone needs it first (RunStore.patchRun).
 */
export function spellFinish(cold: unknown[], row: { started_at?: unknown; duration_ms?: unknown }): void {
  if (cold[COLD_FINISHED] === FINISHED_IS_START_PLUS_DURATION) cold[COLD_FINISHED] = finishOf(row) ?? null;
}

/** Start plus duration of a run row (started_at as text or as the stored ms), or undefined without them. */
function finishOf(row: { started_at?: unknown; duration_ms?: unknown }): string | undefined {
  const started = typeof row.started_at === "number" ? row.started_at : canonicalMs(row.started_at);
  return started !== undefined && typeof row.duration_ms === "number" ? new Date(started + row.duration_ms).toISOString() : undefined;
}

/**
 * The uncompressed record of `steps` (values in STEP_COLUMNS order, all of one run) and `cold` (null: the
 * columns keep their values). Its bytes are what a dictionary is made of.
 */
export function recordText(cold: readonly unknown[] | null, steps: readonly RowValues[]): Uint8Array {
  let base = 0;
  for (const step of steps) {
    const ms = canonicalMs(step[STEP.started_at]);
    if (ms !== undefined) {
      base = ms;
      break;
    }
  }
  const tuples = steps.map((step, place) => {
    const tuple: unknown[] = [];
    for (let i = 0; i < step.length; i++) {
      if (i === STEP.run_id) continue;
      const value = step[i];
      if (i === STEP.id) tuple.push(storedStepId(String(step[STEP.run_id]), value, place, steps.length));
      else if (i === STEP.started_at || i === STEP.finished_at) {
        const ms = canonicalMs(value);
        tuple.push(ms === undefined ? value : ms - base);
      } else tuple.push(value);
    }
    const started = tuple[TUPLE_STARTED];
    const finished = tuple[TUPLE_FINISHED];
    if (typeof started === "number" && typeof finished === "number" && tuple[TUPLE_LENGTH - 1] === finished - started) tuple.pop();
    return tuple;
  });
  return encoder.encode(JSON.stringify([cold, base, tuples]));
}

/** The places of a step's start and finish in its tuple (run_id is left out, before them). */
const TUPLE_STARTED = STEP.started_at - 1;
const TUPLE_FINISHED = STEP.finished_at - 1;

/** A step id as its record holds it (FORMAT 3): null for stepIdOf(run, place + 1), k for stepIdOf(run, k), else the id. */
function storedStepId(runId: string, id: unknown, place: number, count: number): unknown {
  if (!mayBeStepIdOf(id)) return id;
  if (isStepIdOf(id as string, runId, place + 1)) return null;
  for (let k = 1; k <= count; k++) if (k !== place + 1 && isStepIdOf(id as string, runId, k)) return k;
  return id;
}

/**
 * zstd's level for records. Level 6 searches further than the default 3: bench/history.ts's records (~1.2 KB
 * against a ~5 KB dictionary) take ~154 bytes at level 3, ~146 at 4 and ~140 at 6, for ~9 µs a compression at
 * 3 and 4 and ~11 at 6 with node:zlib (9 and up cost ~85 µs), ~2.5 µs at 6 with the kept context of
 * lib/zstd.ts. No content size in the frame header (a byte): the frame's end ends it.
 */
const LEVEL = 6;

/** This thread's compressor, made at its first record (a thread that never packs one never loads libzstd). */
let compressor: ZstdCompressor | undefined;
/** This thread's decompressor, made at the first record it reads. */
let decompressor: ZstdDecompressor | undefined;

/** A record's bytes: `text` (recordText) compressed, against `dictionary` when given. */
export function packRecord(text: Uint8Array, dictionary?: Dictionary): Uint8Array {
  compressor ??= zstdCompressor(LEVEL);
  const out = compressor.compress(text, dictionary, HEADER);
  out[0] = FORMAT;
  out.set(Buffer.from(dictionary?.id ?? NO_DICTIONARY, "hex"), 1);
  return out;
}

/** Whether a record is of the format that can hold cold columns (FORMAT 1's zstd frames never do). */
export const mayHoldColdColumns = (bytes: Uint8Array | null | undefined): boolean => bytes?.[0] === FORMAT || bytes?.[0] === FORMAT_2;

/** The id of the dictionary a record was compressed against, or null. */
export function recordDictionary(bytes: Uint8Array): string | null {
  if (!mayHoldColdColumns(bytes)) return null;
  const id = Buffer.from(bytes.subarray(1, HEADER)).toString("hex");
  return id === NO_DICTIONARY ? null : id;
}

/**
 * The contents of run `runId`'s record. `dictionary` gives the bytes of a dictionary by id (a record whose
 * dictionary is missing cannot be read: that is an error, never an empty run).
 */
export function readRecord(runId: string, bytes: Uint8Array, dictionary: (id: string) => Uint8Array | null): RunRecord {
  const { cold, base, tuples } = unpack(runId, bytes, dictionary);
  const steps = tuples.map((tuple, place) => {
    const row: Record<string, unknown> = {};
    let at = 0;
    for (let i = 0; i < STEP_COLUMNS.length; i++) {
      const name = STEP_COLUMNS[i]!;
      if (i === STEP.run_id) {
        row[name] = runId;
        continue;
      }
      const value = tuple[at++];
      if (i === STEP.id) row[name] = value === null ? stepIdOf(runId, place + 1) : typeof value === "number" ? stepIdOf(runId, value) : value;
      else row[name] = (i === STEP.started_at || i === STEP.finished_at) && typeof value === "number" ? new Date(base + value).toISOString() : value;
    }
    if (tuple.length < TUPLE_LENGTH) row.duration_ms = (tuple[TUPLE_FINISHED] as number) - (tuple[TUPLE_STARTED] as number);
    return row as unknown as StepRow;
  });
  return { cold, steps };
}

/** The cold columns' values a record holds (null: none), without building its steps (a list's rows need only these). */
export function readColdColumns(runId: string, bytes: Uint8Array, dictionary: (id: string) => Uint8Array | null): unknown[] | null {
  return unpack(runId, bytes, dictionary).cold;
}

function unpack(
  runId: string,
  bytes: Uint8Array,
  dictionary: (id: string) => Uint8Array | null,
): { cold: unknown[] | null; base: number; tuples: unknown[][] } {
  let json: string;
  const current = mayHoldColdColumns(bytes);
  if (current) {
    const id = recordDictionary(bytes);
    const frame = bytes.subarray(HEADER);
    decompressor ??= zstdDecompressor();
    if (id === null) json = decompressor.text(frame);
    else {
      const dictionaryBytes = dictionary(id);
      if (!dictionaryBytes) throw new Error(`the record of run ${runId} needs dictionary ${id}, which is not stored`);
      json = decompressor.text(frame, { id, bytes: dictionaryBytes });
    }
  } else json = decoder.decode(Bun.zstdDecompressSync(bytes));
  const [head, base, tuples] = JSON.parse(json) as [unknown, number, unknown[][]];
  if (current) return { cold: head as unknown[] | null, base, tuples };
  if (head === OLD_FORMAT) return { cold: null, base, tuples };
  throw new Error(`the record of run ${runId} is in a format this weft does not read`);
}

/**
 * `row` with the values its record holds for its cold columns. A column that holds something other than its
 * blank was written after the record (an update the writer could not fold into the record: PostgreSQL's
 * writer patches columns without reading the record) and wins.
 */
export function withCold<Row extends object>(row: Row, cold: readonly unknown[] | null): Row {
  if (!cold) return row;
  const values = row as Record<string, unknown>;
  for (let i = 0; i < COLD_COLUMNS.length; i++) {
    const column = COLD_COLUMNS[i]!;
    const value = values[column];
    if (value !== undefined && value !== BLANK[column]) continue;
    if (i !== COLD_FINISHED || cold[i] !== FINISHED_IS_START_PLUS_DURATION) values[column] = cold[i];
    else {
      // A row read without its start and duration (a query that needs neither) gets no finished_at either.
      const finish = finishOf(values);
      if (finish !== undefined) values[column] = finish;
    }
  }
  return row;
}

/**
 * A run's steps from both forms, ordered as run_steps is read (by seq; packed steps, which were written with
 * the run, before rows of the same seq).
 */
export function mergeSteps(packed: StepRow[], rows: StepRow[]): StepRow[] {
  if (rows.length === 0) return packed;
  return [...packed, ...rows].sort((a, b) => a.seq - b.seq);
}
