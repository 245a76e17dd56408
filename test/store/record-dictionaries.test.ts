/**
 * PostgreSQL's run writer and record dictionaries (src/store/postgres/record-dictionaries.ts): a record
 * never goes without its dictionary until a group carrying it committed, and a dictionary in use is
 * announced again every hour (what keeps retention from deleting it).
 */
import { expect, test } from "bun:test";
import { RecordDictionaries, CONFIRMED_FOR_MS } from "../../src/store/postgres/record-dictionaries";
import { readRecord, recordDictionary } from "../../src/store/run-records";
import { encodeOp, packFinishedRuns, type WireOp } from "../../src/store/run-writes";
import { runRow, stepRow } from "../support/run-rows";

const group = (id: string, hash = "h1"): WireOp[] =>
  packFinishedRuns(
    [
      encodeOp({ op: "insertRun", row: runRow(id, { definition_hash: hash, trigger_data: `{"body":{"n":"${id}"}}` }) }),
      encodeOp({ op: "insertStep", row: stepRow(id) }),
    ],
    false,
  );

test("a group carries the dictionary its record needs until a group carrying it committed, and again after an hour", () => {
  let now = 1_000_000;
  const book = new RecordDictionaries(() => now);
  const first = book.compress(group("r1"));
  const second = book.compress(group("r2"));
  // Neither committed yet: both carry it (either may fail alone).
  const [a] = RecordDictionaries.announced(first);
  expect(a).toMatchObject({ definitionHash: "h1" });
  expect(RecordDictionaries.announced(second)).toEqual([a!]);
  book.committed(second);
  expect(RecordDictionaries.announced(book.compress(group("r3")))).toEqual([]);
  // The fourth record completes the definition's next dictionary (its first four records): a new one, carried
  // until a group carrying it committed, then again an hour later.
  const fourth = book.compress(group("r4"));
  const [b] = RecordDictionaries.announced(fourth);
  expect(b).toMatchObject({ definitionHash: "h1" });
  expect(b!.id).not.toBe(a!.id);
  expect(b!.bytes.byteLength).toBeGreaterThan(3 * a!.bytes.byteLength);
  expect(RecordDictionaries.announced(book.compress(group("r5")))).toEqual([b!]);
  book.committed(fourth);
  const sixth = book.compress(group("r6"));
  expect(RecordDictionaries.announced(sixth)).toEqual([]);
  const r6 = sixth.find((o) => o[0] === 10) as Extract<WireOp, { 0: 10 }>;
  expect(recordDictionary(r6[2])).toBe(b!.id);
  expect(readRecord("r6", r6[2], (id) => (id === b!.id ? b!.bytes : null)).steps).toEqual([stepRow("r6")]);
  now += CONFIRMED_FOR_MS + 1;
  expect(RecordDictionaries.announced(book.compress(group("r7")))).toEqual([b!]);
  // Another definition, another dictionary.
  expect(RecordDictionaries.announced(book.compress(group("r8", "h2")))[0]).toMatchObject({ definitionHash: "h2" });
  // The record names its dictionary and reads back with it: the run's cold columns and its step.
  const op = first.find((o) => o[0] === 10) as Extract<WireOp, { 0: 10 }>;
  expect(recordDictionary(op[2])).toBe(a!.id);
  const record = readRecord("r1", op[2], (id) => (id === a!.id ? a!.bytes : null));
  expect(record.steps).toEqual([stepRow("r1")]);
  expect(record.cold?.[0]).toBe('{"body":{"n":"r1"}}');
  expect(op[1][8]).toBe("");
});
