/** Git sync's settings on PostgreSQL (../git-sync.ts says what each answers). */
import { type GitSyncRepository, type GitSyncRow, gitSyncRowOf as rowOf, gitSyncValues, type StoredGitSyncRow as Stored } from "../git-sync";
import type { PostgresConnection } from "./connection";

export class PostgresGitSync implements GitSyncRepository {
  constructor(private readonly c: PostgresConnection) {}

  async get(workspaceId: string) {
    return rowOf(await this.c.get<Stored>("SELECT * FROM git_sync WHERE workspace_id = $1", [workspaceId]));
  }
  async list() {
    return (await this.c.all<Stored>("SELECT * FROM git_sync ORDER BY workspace_id")).map((row) => rowOf(row)!);
  }
  async put(r: GitSyncRow) {
    await this.c.run(
      `INSERT INTO git_sync (workspace_id, remote_url, branch, folder, username, secret, ssh_public_key, managed, prune, schedule, webhook_secret, updated_by, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (workspace_id) DO UPDATE SET remote_url = excluded.remote_url, branch = excluded.branch, folder = excluded.folder,
         username = excluded.username, secret = excluded.secret, ssh_public_key = excluded.ssh_public_key, managed = excluded.managed, prune = excluded.prune, schedule = excluded.schedule,
         webhook_secret = excluded.webhook_secret, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
      gitSyncValues(r),
    );
  }
  async markSynced(workspaceId: string, commit: string | null, files: string, at: string | null) {
    await this.c.run("UPDATE git_sync SET last_commit = $1, synced_files = $2, synced_at = $3 WHERE workspace_id = $4", [commit, files, at, workspaceId]);
  }
  async delete(workspaceId: string) {
    await this.c.run("DELETE FROM git_sync WHERE workspace_id = $1", [workspaceId]);
  }
}
