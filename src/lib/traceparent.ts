/**
 * The W3C Trace Context `traceparent` header (docs/operations.md, "Traces"): a run started with one keeps it,
 * and its steps' outgoing HTTP calls carry the trace on. Only a well-formed value is accepted; anything else
 * is ignored as the W3C recommendation says (the run then starts a trace of its own).
 *
 *   validTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") // the same string
 *   validTraceparent("garbage")                                                 // undefined
 */

/** version "00" (or a later one, read as 00), 32 hex trace id, 16 hex parent id, 2 hex flags. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The header when it is well formed (lower-cased and trimmed), else undefined. */
export function validTraceparent(value: string | null | undefined): string | undefined {
  if (typeof value !== "string" || value.length > 512) return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match) return undefined;
  const [, version, traceId, parentId, flags, rest] = match;
  if (version === "ff" || /^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return undefined;
  // Version 00 has exactly four fields; a later version may append more, which a 00 reader drops.
  if (version === "00" && rest !== undefined) return undefined;
  return `00-${traceId}-${parentId}-${flags}`;
}
