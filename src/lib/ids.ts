/** Identifiers and secrets. UUIDs are v7 so that ids sort by creation time. */
import { randomBytes, timingSafeEqual } from "node:crypto";

export const newId = (): string => Bun.randomUUIDv7();

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
