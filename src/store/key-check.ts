/**
 * The encryption key check (migration 23): a known text encrypted with the key a cluster's secrets use, and
 * the key ids the stored secrets were written with. An instance on a shared database compares its own key
 * with them before it starts (src/core/key-check.ts).
 */
import type { Db } from "./db";

/** The check's one row. */
const CURRENT = "current";

export class KeyCheckStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      get: db.query<{ value: string }, [string]>("SELECT value FROM encryption_key_check WHERE name = ?"),
      // Instances recording at once: the first insert wins, the others' do nothing and they read the winner's.
      record: db.query<never, [string, string, string]>("INSERT OR IGNORE INTO encryption_key_check (name, value, recorded_at) VALUES (?, ?, ?)"),
      // Encrypted values read `v1:<keyId>:…` (src/core/crypto.ts): the key id is characters 4 to 11. The columns
      // whose every value is one; a blob inside JSON elsewhere is found by the rotation, not here.
      secretKeyIds: db.query<{ key_id: string }, []>(
        `SELECT substr(secrets, 4, 8) AS key_id FROM connections WHERE secrets LIKE 'v1:%'
         UNION SELECT substr(tokens, 4, 8) FROM connections WHERE tokens LIKE 'v1:%'
         UNION SELECT substr(value, 4, 8) FROM workflow_variables WHERE secret = 1 AND value LIKE 'v1:%'`,
      ),
    };
  }

  /** The recorded check, or null while none is (a new database, or one from before migration 23). */
  current(): string | null {
    return this.q.get.get(CURRENT)?.value ?? null;
  }

  /** Records `value` unless a check is recorded already; true when this call recorded it. */
  recordIfAbsent(value: string, at: string): boolean {
    return this.q.record.run(CURRENT, value, at).changes > 0;
  }

  /** The ids of the keys the stored connection secrets and secret variables were encrypted with. */
  secretKeyIds(): string[] {
    return this.q.secretKeyIds.all().map((row) => row.key_id);
  }
}
