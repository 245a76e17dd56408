/**
 * src/lib/zstd.ts: records compressed through the system's libzstd (a kept context, prepared dictionaries) or
 * through node:zlib must be frames node:zlib reads back to the exact text, against the same dictionary, with
 * no content size in their header, and no larger than node:zlib's own; and either decompressor must read every
 * such frame back to the exact text, whatever its size, and name a frame it cannot read.
 */
import { expect, test } from "bun:test";
import { zstdDecompressSync } from "node:zlib";
import { PREPARED_DICTIONARIES, type ZstdCompressor, type ZstdDecompressor, type ZstdDictionary, zstdCompressor, zstdDecompressor } from "../../src/lib/zstd";

const LEVEL = 6;
const native = zstdCompressor(LEVEL);
const fallback = zstdCompressor(LEVEL, { native: false });
const hasLibzstd = native.library === "libzstd";
if (!hasLibzstd) console.log("libzstd tests skipped: the system's libzstd did not load (install the Debian package libzstd1)");

const encoder = new TextEncoder();
const record = (i: number) =>
  encoder.encode(
    JSON.stringify([
      [{ method: "POST", headers: { "content-type": "application/json" }, body: { name: `user ${i}`, n: i } }, "org", "Shop orders"],
      1793197090578 + i,
      [0, 1, 2].map((k) => [null, k, "greet", "PIECE", "data", "set_fields", null, "completed", `{"greeting":"Hello ${i}"}`, `{"n":${i * k}}`, 0, 1]),
    ]),
  );
const dictionaryOf = (id: string, bytes: Uint8Array): ZstdDictionary => ({ id, bytes });

/** Deterministic bytes that do not compress (xorshift). */
function noise(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const readBack = (frame: Uint8Array, dictionary?: ZstdDictionary): Uint8Array =>
  new Uint8Array(zstdDecompressSync(frame, dictionary ? { dictionary: dictionary.bytes } : {}));

const compressors: Array<[string, ZstdCompressor]> = [["node:zlib", fallback]];
if (hasLibzstd) compressors.push(["libzstd", native]);

for (const [name, compressor] of compressors) {
  test(`${name}: texts of every size come back exactly, with and without a dictionary, after the prefix`, () => {
    const dictionary = dictionaryOf("d1", Buffer.concat([record(1), record(2), record(3), record(4)]));
    const texts = [
      new Uint8Array(0),
      encoder.encode("x"),
      record(7),
      record(123_456),
      noise(3_000, 5),
      noise(200_000, 9),
      encoder.encode("ab".repeat(150_000)),
    ];
    for (const text of texts) {
      for (const dict of [undefined, dictionary]) {
        const framed = compressor.compress(text, dict, 9);
        expect(Array.from(framed.subarray(0, 9))).toEqual(new Array(9).fill(0));
        expect(readBack(framed.subarray(9), dict)).toEqual(text);
        const bare = compressor.compress(text, dict);
        expect(readBack(bare, dict)).toEqual(text);
        // Frame header descriptor: no content size field (bits 7–6) and not single-segment (bit 5, which implies one).
        expect(bare[4]! & 0xe0).toBe(0);
      }
    }
  });
}

test.skipIf(!hasLibzstd)("libzstd's frames are no larger than node:zlib's at the same level", () => {
  const dictionary = dictionaryOf("d2", Buffer.concat([record(10), record(11), record(12), record(13)]));
  let ours = 0;
  let theirs = 0;
  for (let i = 100; i < 400; i++) {
    ours += native.compress(record(i), dictionary).byteLength;
    theirs += fallback.compress(record(i), dictionary).byteLength;
  }
  expect(ours).toBeLessThanOrEqual(theirs);
  // A dictionary helps: the same records alone take far more.
  let alone = 0;
  for (let i = 100; i < 400; i++) alone += native.compress(record(i)).byteLength;
  expect(ours * 2).toBeLessThan(alone);
});

test.skipIf(!hasLibzstd)("each frame is made against its own dictionary while more dictionaries than are kept prepared take turns", () => {
  // Different dictionaries (each its own records' run ids), cycled so each is freed and prepared again.
  const count = PREPARED_DICTIONARIES * 2 + 3;
  const dictionaries = Array.from({ length: count }, (_, d) => dictionaryOf(`dict-${d}`, Buffer.concat([record(d * 1000), record(d * 1000 + 1)])));
  for (let round = 0; round < 3; round++) {
    for (let d = 0; d < count; d++) {
      const dictionary = dictionaries[(d * 7 + round) % count]!;
      const text = record(round * 100_000 + d);
      const frame = native.compress(text, dictionary);
      expect(readBack(frame, dictionary)).toEqual(text);
      // Interleaved frames without a dictionary must not use the last one referred to.
      const plain = native.compress(text);
      expect(readBack(plain)).toEqual(text);
    }
  }
});

const decompressors: Array<[string, ZstdDecompressor]> = [["node:zlib", zstdDecompressor({ native: false })]];
if (hasLibzstd) decompressors.push(["libzstd", zstdDecompressor()]);
const decoder = new TextDecoder();

for (const [name, decompressor] of decompressors) {
  test(`${name} decompressor: every compressor's frames come back as their exact text, larger than the kept buffer too`, () => {
    expect(decompressor.library).toBe(name as ZstdDecompressor["library"]);
    const dictionary = dictionaryOf("d3", Buffer.concat([record(21), record(22), record(23)]));
    const texts = [
      "",
      "x",
      decoder.decode(record(8)),
      "grüße, €, 😀 ".repeat(5_000),
      "ab".repeat(150_000),
      // ~270 KB that hardly compresses: more than four times the kept 64 KiB, so the buffer grows twice.
      Buffer.from(noise(200_000, 3)).toString("base64"),
    ];
    for (const [, compressor] of compressors)
      for (const text of texts)
        for (const dict of [undefined, dictionary]) expect(decompressor.text(compressor.compress(encoder.encode(text), dict), dict)).toBe(text);
  });

  test(`${name} decompressor: a frame it cannot read is refused, and the next frame still reads`, () => {
    const good = fallback.compress(record(5));
    const broken = new Uint8Array(good);
    broken[0] = 0x00;
    expect(() => decompressor.text(broken)).toThrow(/zstd|Unknown frame|unknown/i);
    // A frame cut short: libzstd says so; node:zlib's zstdDecompressSync returns what it got (here nothing).
    if (decompressor.library === "libzstd") expect(() => decompressor.text(good.subarray(0, good.byteLength - 3))).toThrow(/zstd could not decompress/);
    expect(decompressor.text(good)).toBe(decoder.decode(record(5)));
  });
}

test.skipIf(!hasLibzstd)("libzstd decompressor: each frame is read against its own dictionary while more dictionaries than are kept take turns", () => {
  const decompressor = zstdDecompressor();
  const count = PREPARED_DICTIONARIES * 2 + 3;
  const dictionaries = Array.from({ length: count }, (_, d) => dictionaryOf(`read-${d}`, Buffer.concat([record(d * 1000), record(d * 1000 + 1)])));
  for (let round = 0; round < 3; round++) {
    for (let d = 0; d < count; d++) {
      const dictionary = dictionaries[(d * 5 + round) % count]!;
      const text = record(round * 100_000 + d);
      expect(decompressor.text(native.compress(text, dictionary), dictionary)).toBe(decoder.decode(text));
      expect(decompressor.text(native.compress(text))).toBe(decoder.decode(text));
    }
  }
});
