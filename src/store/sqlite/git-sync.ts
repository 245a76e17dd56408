/** Git sync's settings on SQLite (../git-sync.ts says what each answers). */
import type { Database } from "bun:sqlite";
import {
  type GitSyncRepository,
  type GitSyncRow,
  type GitSyncValues,
  gitSyncRowOf as rowOf,
  gitSyncValues,
  type StoredGitSyncRow as Stored,
} from "../git-sync";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => ({
  get: db.query<Stored, [string]>("SELECT * FROM git_sync WHERE workspace_id = ?"),
  list: db.query<Stored, []>("SELECT * FROM git_sync ORDER BY workspace_id"),
  put: db.query<null, GitSyncValues>(
    `INSERT INTO git_sync (workspace_id, remote_url, branch, folder, username, secret, ssh_public_key, managed, prune, schedule, webhook_secret, updated_by, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (workspace_id) DO UPDATE SET remote_url = excluded.remote_url, branch = excluded.branch, folder = excluded.folder,
       username = excluded.username, secret = excluded.secret, ssh_public_key = excluded.ssh_public_key, managed = excluded.managed, prune = excluded.prune, schedule = excluded.schedule,
       webhook_secret = excluded.webhook_secret, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  ),
  markSynced: db.query<null, [string | null, string, string | null, string]>(
    "UPDATE git_sync SET last_commit = ?, synced_files = ?, synced_at = ? WHERE workspace_id = ?",
  ),
  delete: db.query<null, [string]>("DELETE FROM git_sync WHERE workspace_id = ?"),
});

export class SqliteGitSync extends Prepared(statements) implements GitSyncRepository {
  get(workspaceId: string) {
    return this.c.do(() => rowOf(this.q.get.get(workspaceId)));
  }
  list() {
    return this.c.do(() => this.q.list.all().map((row) => rowOf(row)!));
  }
  put(r: GitSyncRow) {
    return this.c.do(() => void this.q.put.run(...gitSyncValues(r)));
  }
  markSynced(workspaceId: string, commit: string | null, files: string, at: string | null) {
    return this.c.do(() => void this.q.markSynced.run(commit, files, at, workspaceId));
  }
  delete(workspaceId: string) {
    return this.c.do(() => void this.q.delete.run(workspaceId));
  }
}
