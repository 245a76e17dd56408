/** Identifiers and secrets. UUIDs are v7 so that ids sort by creation time. */
import { randomBytes, createHash, timingSafeEqual } from "node:crypto";

export const newId = (): string => Bun.randomUUIDv7();

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID_PATTERN.test(value);

/** A random, URL-safe secret with a readable prefix, e.g. `weft_…`. */
export const newSecret = (prefix: string, bytes = 32): string => `${prefix}${randomBytes(bytes).toString("base64url")}`;

export const sha256 = (value: string): string => createHash("sha256").update(value).digest("hex");

/** Constant-time string comparison (lengths are compared first, which leaks only the length). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
