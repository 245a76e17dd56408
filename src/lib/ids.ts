/** Identifiers and secrets. UUIDs are v7 so that ids sort by creation time. */
import { randomBytes, timingSafeEqual } from "node:crypto";

export const newId = (): string => Bun.randomUUIDv7();

/**
 * The id of the k-th step (1, 2, …) a run creates: the UUIDv5 (RFC 9562, SHA-1 name-based) of the decimal k in
 * the run id's namespace (a run id that is not a UUID is its own UTF-8 bytes as namespace). Unique as the run
 * id is, and derivable: a run's record stores no step id it can derive (store/run-records.ts).
 *
 * The name is written into one reused buffer, the run id's hex read through a table (~0.3 µs a step with
 * runs interleaved, against ~0.75 with a Buffer for each part; remembering answers in a Map keyed by run and
 * number measured slower in bench/engine.ts than hashing again: isStepIdOf remembers by the id instead).
 */
export function stepIdOf(runId: string, k: number): string {
  let length: number;
  if (UUID_PATTERN.test(runId)) {
    if (runId !== namespaceOf) {
      for (let i = 0, at = 0; i < 16; i++, at += 2) {
        if (at === 8 || at === 13 || at === 18 || at === 23) at++; // the dashes
        nameBytes[i] = (NIBBLE[runId.charCodeAt(at)]! << 4) | NIBBLE[runId.charCodeAt(at + 1)]!;
      }
      namespaceOf = runId;
    }
    const digits = String(k); // ASCII: its UTF-8 bytes are its character codes
    for (let i = 0; i < digits.length; i++) nameBytes[16 + i] = digits.charCodeAt(i);
    length = 16 + digits.length;
  } else {
    namespaceOf = "";
    const name = utf8.encode(runId + String(k));
    length = name.length;
    if (length > nameBytes.length) return formatV5(Bun.SHA1.hash(name) as Uint8Array);
    nameBytes.set(name);
  }
  Bun.SHA1.hash(nameBytes.subarray(0, length), digest);
  const id = formatV5(digest);
  const slot = slotOf(id);
  recentIds[slot] = id;
  recentRuns[slot] = runId;
  recentKs[slot] = k;
  return id;
}

/**
 * Whether `id` is stepIdOf(runId, k). The writer asks it of every step it packs (store/run-records.ts), most
 * often right after the engine named that step in the same thread: the newest ids named are remembered in 256
 * slots (by their last two characters), so those are answered without hashing; any other is hashed.
 */
export function isStepIdOf(id: string, runId: string, k: number): boolean {
  const slot = slotOf(id);
  if (recentIds[slot] === id && recentKs[slot] === k && recentRuns[slot] === runId) return true;
  return id === stepIdOf(runId, k);
}

const slotOf = (id: string): number => (id.charCodeAt(id.length - 2) * 16 + id.charCodeAt(id.length - 1)) & 255;
const recentIds: string[] = new Array(256).fill("");
const recentRuns: string[] = new Array(256).fill("");
const recentKs = new Float64Array(256);

/** The name hashed by stepIdOf: the run id's 16 bytes (kept while the run id is `namespaceOf`), then k. */
const nameBytes = new Uint8Array(64);
let namespaceOf = "";
const digest = new Uint8Array(20);
/** A hex digit's value by its character code (0–9, a–f, A–F). */
const NIBBLE = new Uint8Array(128);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) NIBBLE[97 + i] = NIBBLE[65 + i] = 10 + i;
/** The character code of each hex digit. */
const HEX_CODES = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** A UUID's text, dashes in place, refilled by formatV5. */
const uuidText = Buffer.alloc(36, "-");
/** Where each of a UUID's 16 bytes goes in its text. */
const BYTE_PLACES = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * A SHA-1 digest as a version-5 UUID (its first 16 bytes, version and variant bits set): written into one
 * buffer and read out as one string (~50 ns; a template of 20 parts took ~130 and made a string of 20 pieces).
 */
function formatV5(h: Uint8Array): string {
  for (let i = 0; i < 16; i++) {
    const byte = i === 6 ? (h[6]! & 0x0f) | 0x50 : i === 8 ? (h[8]! & 0x3f) | 0x80 : h[i]!;
    const at = BYTE_PLACES[i]!;
    uuidText[at] = HEX_CODES[byte >> 4]!;
    uuidText[at + 1] = HEX_CODES[byte & 15]!;
  }
  return uuidText.toString("latin1", 0, 36);
}

/** Whether `id` could be a step id of stepIdOf (a version-5 UUID), before hashing to know. */
export const mayBeStepIdOf = (id: unknown): boolean => typeof id === "string" && id.length === 36 && id[14] === "5";

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID_PATTERN.test(value);

/** A random, URL-safe secret with a readable prefix, e.g. `weft_…`. */
export const newSecret = (prefix: string, bytes = 32): string => `${prefix}${randomBytes(bytes).toString("base64url")}`;

/** Hex SHA-256 of a string (Bun's one-shot hasher: a fifth of node:crypto's createHash per call, same digest). */
export const sha256 = (value: string): string => Bun.SHA256.hash(value, "hex") as string;

const utf8 = new TextEncoder();

/** Constant-time string comparison (lengths are compared first, which leaks only the length). */
export function safeEqual(a: string, b: string): boolean {
  const left = utf8.encode(a);
  const right = utf8.encode(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
