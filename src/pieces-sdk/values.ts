/**
 * Small readers and builders several pieces share (docs/pieces.md, "Writing a piece"): a dropdown's labelled
 * choices written as one map, a list setting given as an array or as comma-separated text, and an object
 * setting given as an object or as JSON text.
 *
 *   kind: Property.staticDropdown({ displayName: "Body type", default: "none", options: labelled({ none: "None", json: "JSON" }) }),
 *   const labels = listOf(ctx.config.labels); // "bug, help wanted" → ["bug", "help wanted"]
 */

/** A dropdown's choices from value → label, in the map's order: `labelled({ tls: "TLS" })` is `[{ label: "TLS", value: "tls" }]`. */
export function labelled(labels: Record<string, string>): Array<{ label: string; value: string }> {
  return Object.entries(labels).map(([value, label]) => ({ label, value }));
}

/** The non-empty strings of an array, or of a comma-separated text (each trimmed); [] for anything else. */
export function listOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String).filter(Boolean);
  if (typeof value !== "string") return [];
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * An object setting: absent (undefined, null, "") is {}, JSON text is parsed, and anything but an object is
 * refused with a message naming `field` and showing `example` (a JSON object).
 */
export function jsonObjectOf(value: unknown, field: string, example: string): Record<string, unknown> {
  if (value === undefined || value === null || value === "") return {};
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new Error(`${field} must be a JSON object, e.g. ${example}; got ${value.slice(0, 80)}`);
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`${field} must be a JSON object, e.g. ${example}`);
  return parsed as Record<string, unknown>;
}
