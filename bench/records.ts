/**
 * What packing a stored run's record costs (src/store/run-records.ts, src/lib/zstd.ts): the CPU time of one
 * compression of a three-step webhook run's record against its definition's dictionary, with the kept
 * libzstd context the store uses and with node:zlib (the fallback), and the bytes each gives.
 * `npm run bench -- records`.
 */
import { zstdDecompressSync } from "node:zlib";
import { stepIdOf } from "../src/lib/ids";
import { type ZstdCompressor, zstdCompressor } from "../src/lib/zstd";
import { DICTIONARY_RECORDS, dictionaryFrom, recordText, splitCold } from "../src/store/run-records";
import { RUN_INDEX, runValues, stepValues } from "../src/store/run-rows";
import { runRow, stepRow } from "../test/support/run-rows";
import { machine } from "./_support";

const RECORDS = 2_000;
const ROUNDS = 10;
const LEVEL = 6;

/** The record text of the n-th run of a webhook → set fields → reply workflow (bench/peers.ts's shape). */
function text(n: number): Uint8Array {
  const id = Bun.randomUUIDv7("hex", Date.UTC(2026, 10, 27) + n);
  const started = new Date(Date.UTC(2026, 10, 27) + n).toISOString();
  const body = { name: `customer ${n % 500}`, n };
  const triggerData = JSON.stringify({
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(JSON.stringify(body).length), host: "127.0.0.1:8080", "user-agent": "wrk" },
    query: {},
    body,
  });
  const run = runRow(id, { workflow_name: "Greet", trigger_data: triggerData, started_at: started, finished_at: started, duration_ms: 0, step_total: 3 });
  const output = { greeting: `hello ${body.name}`, doubled: n * 2 };
  const steps = [
    stepRow(id, {
      id: stepIdOf(id, 1),
      seq: 1,
      node_id: "trigger",
      piece_id: "webhook",
      action_id: "catch",
      input_data: null,
      output_data: triggerData,
      started_at: started,
      finished_at: started,
    }),
    stepRow(id, {
      id: stepIdOf(id, 2),
      seq: 2,
      node_id: "greet",
      input_data: JSON.stringify({ fields: output }),
      output_data: JSON.stringify(output),
      started_at: started,
      finished_at: started,
    }),
    stepRow(id, {
      id: stepIdOf(id, 3),
      seq: 3,
      node_id: "reply",
      piece_id: "webhook",
      action_id: "respond",
      input_data: JSON.stringify({ status: 200, body: output }),
      output_data: JSON.stringify({ status: 200 }),
      started_at: started,
      finished_at: started,
    }),
  ];
  const { cold } = splitCold(runValues(run), RUN_INDEX);
  return recordText(cold, steps.map(stepValues));
}

const texts = Array.from({ length: RECORDS }, (_, n) => text(n));
const dictionary = dictionaryFrom(Buffer.concat(texts.slice(0, DICTIONARY_RECORDS)))!;

function measure(label: string, compressor: ZstdCompressor) {
  // Warm-up, and every frame read back as it was written.
  for (const t of texts) {
    const frame = compressor.compress(t, dictionary);
    if (!Buffer.from(zstdDecompressSync(frame, { dictionary: dictionary.bytes })).equals(Buffer.from(t)))
      throw new Error(`${label}: a record did not come back`);
  }
  let bytes = 0;
  const started = process.cpuUsage();
  for (let round = 0; round < ROUNDS; round++) for (const t of texts) bytes += compressor.compress(t, dictionary).byteLength;
  const used = process.cpuUsage(started);
  const us = (used.user + used.system) / (ROUNDS * RECORDS);
  console.log(`${label.padEnd(34)} ${us.toFixed(2)} µs of CPU a record, ${(bytes / (ROUNDS * RECORDS)).toFixed(0)} bytes`);
}

console.log(
  `machine: ${machine()}; ${RECORDS} three-step records of ~${(texts.reduce((n, t) => n + t.byteLength, 0) / RECORDS).toFixed(0)} bytes, dictionary ${dictionary.bytes.byteLength} bytes, zstd level ${LEVEL}`,
);
const kept = zstdCompressor(LEVEL);
if (kept.library === "libzstd") measure("libzstd, kept context", kept);
else console.log("libzstd did not load (the Debian package libzstd1): the store compresses with node:zlib");
measure("node:zlib, a context a record", zstdCompressor(LEVEL, { native: false }));
