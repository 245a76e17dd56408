/**
 * Finds every value encrypted by src/core/crypto.ts anywhere in the database — whole column values and
 * blobs embedded in JSON text alike — so a key rotation can rewrite them without each module having to
 * register its encrypted columns. A blob is recognised by its shape (`v1:<keyId>:<nonce>:<data>`); the
 * caller's decryption (AES-GCM authenticates) decides whether it really is one.
 *
 * What the storage port (./port.ts) answers about them; implemented by ./sqlite/encrypted-values.ts and
 * ./postgres/encrypted-values.ts, each reading its own catalogue of tables and columns.
 */

export const BLOB_PATTERN = /v1:[0-9a-f]{8}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+/g;

/** A table's or column's name quoted for a statement (both databases quote with double quotes). */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

export interface RewriteStats {
  /** Blobs rewritten. */
  rewritten: number;
  /** Blob-shaped strings left alone because `rewrite` returned them unchanged. */
  kept: number;
  /** Rows updated. */
  rows: number;
}

export interface EncryptedValueRepository {
  /**
   * Calls `rewrite(blob)` for every blob-shaped string in every text column and writes back what changed.
   * Called inside a unit (Storage.atomically), so all of it is kept or none is: a crash leaves every value
   * readable under the old key or all under the new.
   */
  rewriteAll(rewrite: (blob: string) => string): Promise<RewriteStats>;
}

/** A stored text with each of its blobs rewritten, counted in `stats`; null when none changed. */
export function rewrittenText(text: string, rewrite: (blob: string) => string, stats: RewriteStats): string | null {
  let changed = false;
  const next = text.replace(BLOB_PATTERN, (blob) => {
    const out = rewrite(blob);
    if (out === blob) stats.kept++;
    else {
      stats.rewritten++;
      changed = true;
    }
    return out;
  });
  return changed ? next : null;
}
