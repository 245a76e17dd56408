/**
 * What a step row stores: the resolved input with secrets masked, and input/output serialised once
 * and capped in size. The serialised length is also what the per-run memory budget counts.
 */

export const MASK = "********";

/** Property names whose values are never shown in a step's inputData. */
const SECRET_KEY = /(^|[_-])(pass(word)?|secret|token|api[_-]?key|apikey|authorization|cookie|private[_-]?key|client[_-]?secret|credentials?)$/i;

/**
 * Replaces secret values: any property whose name says it holds a secret, and every occurrence of a
 * known secret value (decrypted secret variables, connection credentials) anywhere in a string.
 */
export function maskSecrets(value: unknown, secrets: readonly string[] = [], byKey = true): unknown {
  const known = secrets.filter((s) => typeof s === "string" && s.length >= 4);
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") {
      if (known.length === 0) return v;
      let out = v;
      for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(MASK);
      return out;
    }
    if (v === null || typeof v !== "object" || depth > 64) return v;
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v)) {
      const item = (v as Record<string, unknown>)[key];
      out[key] = byKey && SECRET_KEY.test(key) && item !== null && item !== undefined && item !== "" && typeof item !== "object" ? MASK : walk(item, depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}

export interface Serialized {
  /** JSON text to store (the truncation marker when over the cap); null for undefined. */
  text: string | null;
  /** Length of the full serialisation in characters (what the memory budget counts). */
  size: number;
  truncated: boolean;
}

const PREVIEW_CHARS = 1024;

/** Serialises once; over `limit` characters the stored text is a marker naming the size and the cap. */
export function serializeCapped(value: unknown, limit: number): Serialized {
  if (value === undefined) return { text: null, size: 0, truncated: false };
  let full: string;
  try {
    full = JSON.stringify(value) ?? "null";
  } catch (error) {
    const marker = { truncated: true, error: `not serialisable as JSON: ${(error as Error).message}` };
    return { text: JSON.stringify(marker), size: 0, truncated: true };
  }
  if (full.length <= limit) return { text: full, size: full.length, truncated: false };
  const marker = { truncated: true, sizeBytes: Buffer.byteLength(full), limitBytes: limit, preview: full.slice(0, PREVIEW_CHARS) };
  return { text: JSON.stringify(marker), size: full.length, truncated: true };
}

/** A property name ending like a secret one (SECRET_KEY), as it appears in JSON text: `"token":`, `"x_api_key":`. */
const SECRET_KEY_IN_JSON = /["_-](pass(word)?|secret|token|api[_-]?key|apikey|authorization|cookie|private[_-]?key|client[_-]?secret|credentials?)":/i;

/**
 * maskSecrets(value, secrets) then serializeCapped, without walking the value when nothing can need a
 * mask: no known secret values, and no property named like a secret in the serialised text.
 */
export function serializeMasked(value: unknown, secrets: readonly string[], limit: number): Serialized {
  if (secrets.length === 0) {
    const plain = serializeCapped(value, limit);
    if (!plain.truncated && (plain.text === null || !SECRET_KEY_IN_JSON.test(plain.text))) return plain;
  }
  return serializeCapped(maskSecrets(value, secrets), limit);
}
