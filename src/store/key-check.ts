/**
 * The encryption key check (migration 23): a known text encrypted with the key a cluster's secrets use, and
 * the key ids the stored secrets were written with. An instance on a shared database compares its own key
 * with them before it starts (src/core/key-check.ts). What the storage port (./port.ts) answers about them.
 */
export interface KeyCheckRepository {
  /** The recorded check, or null while none is (a new database, or one from before migration 23). */
  current(): Promise<string | null>;
  /**
   * Records `value` unless a check is recorded already; true when this call recorded it. Instances recording at
   * once: the first insert wins, the others' do nothing and they read the winner's.
   */
  recordIfAbsent(value: string, at: string): Promise<boolean>;
  /**
   * The ids of the keys the stored connection secrets and secret variables were encrypted with. Encrypted values
   * read `v1:<keyId>:…` (src/core/crypto.ts): the key id is characters 4 to 11. The columns whose every value is
   * one; a blob inside JSON elsewhere is found by the rotation, not here.
   */
  secretKeyIds(): Promise<string[]>;
}

/** The check's one row. */
export const CURRENT_CHECK = "current";
