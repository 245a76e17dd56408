/** Identifiers and secrets. UUIDs are v7 so that ids sort by creation time. */
import { randomBytes, timingSafeEqual } from "node:crypto";

export const newId = (): string => Bun.randomUUIDv7();

/**
 * The id of the k-th step (1, 2, …) a run creates: the UUIDv5 (RFC 9562, SHA-1 name-based) of the decimal k in
 * the run id's namespace (a run id that is not a UUID is its own UTF-8 bytes as namespace). Unique as the run
 * id is, and derivable: a run's record stores no step id it can derive (store/run-records.ts).
 *
 * The name is hashed from one reused buffer that keeps the last run id's bytes (~0.3–0.45 µs, against ~0.7
 * with a new Buffer for each part; remembering answers in a Map for the writer's second ask measured slower
 * in bench/engine.ts).
 */
export function stepIdOf(runId: string, k: number): string {
  let length: number;
  if (UUID_PATTERN.test(runId)) {
    if (runId !== namespaceOf) {
      const hex = runId.replaceAll("-", "");
      for (let i = 0; i < 16; i++) nameBytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
      namespaceOf = runId;
    }
    length = 16 + utf8.encodeInto(String(k), nameBytes.subarray(16)).written;
  } else {
    namespaceOf = "";
    const name = utf8.encode(runId + String(k));
    length = name.length;
    if (length > nameBytes.length) return formatV5(Bun.SHA1.hash(name) as Uint8Array);
    nameBytes.set(name);
  }
  Bun.SHA1.hash(nameBytes.subarray(0, length), digest);
  return formatV5(digest);
}

/** The name hashed by stepIdOf: the run id's 16 bytes (kept while the run id is `namespaceOf`), then k. */
const nameBytes = new Uint8Array(64);
let namespaceOf = "";
const digest = new Uint8Array(20);
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** A SHA-1 digest as a version-5 UUID (its first 16 bytes, version and variant bits set). */
function formatV5(h: Uint8Array): string {
  const at = (i: number) => HEX[h[i]!]!;
  const version = HEX[(h[6]! & 0x0f) | 0x50]!;
  const variant = HEX[(h[8]! & 0x3f) | 0x80]!;
  return `${at(0)}${at(1)}${at(2)}${at(3)}-${at(4)}${at(5)}-${version}${at(7)}-${variant}${at(9)}-${at(10)}${at(11)}${at(12)}${at(13)}${at(14)}${at(15)}`;
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
