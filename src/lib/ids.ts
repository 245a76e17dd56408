/** Identifiers and secrets. UUIDs are v7 so that ids sort by creation time. */
import { hash, randomBytes, timingSafeEqual } from "node:crypto";

export const newId = (): string => Bun.randomUUIDv7();

/**
 * The id of the k-th step (1, 2, …) a run creates: the UUIDv5 (RFC 9562, SHA-1 name-based) of the decimal k in
 * the run id's namespace (a run id that is not a UUID is its own UTF-8 bytes as namespace). Unique as the run
 * id is, and derivable: a run's record stores no step id it can derive (store/run-records.ts).
 */
export function stepIdOf(runId: string, k: number): string {
  const namespace = UUID_PATTERN.test(runId) ? Buffer.from(runId.replaceAll("-", ""), "hex") : Buffer.from(runId);
  const digest = hash("sha1", Buffer.concat([namespace, Buffer.from(String(k))]), "buffer") as Buffer;
  digest[6] = (digest[6]! & 0x0f) | 0x50;
  digest[8] = (digest[8]! & 0x3f) | 0x80;
  const hex = digest.toString("hex", 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
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
