/** Connections, OAuth2 states and refresh leases on SQLite (../connections.ts says what each answers). */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { ConnectionFilter, ConnectionRepository, ConnectionRow, OAuth2StateRow, WorkflowMention } from "../connections";
import { bindRow, countOf } from "./db";
import { Prepared } from "./connection";

/** Its statements, prepared once per connection. */
const statements = (db: Database) => {
  const filter = "workspace_id = $workspace_id AND ($piece_id IS NULL OR piece_id = $piece_id) AND ($status IS NULL OR status = $status)";
  return {
    insert: db.query(
      `INSERT INTO connections (id, org_id, workspace_id, piece_id, name, auth_kind, grant_type, status, status_message, config, client_id, managed_app, public_values, secrets, tokens, token_expires_at, created_by, created_at, updated_at)
         VALUES ($id, $org_id, $workspace_id, $piece_id, $name, $auth_kind, $grant_type, $status, $status_message, $config, $client_id, $managed_app, $public_values, $secrets, $tokens, $token_expires_at, $created_by, $created_at, $updated_at)`,
    ),
    get: db.query<ConnectionRow, [string, string]>("SELECT * FROM connections WHERE id = ? AND workspace_id = ?"),
    getById: db.query<ConnectionRow, [string]>("SELECT * FROM connections WHERE id = ?"),
    byName: db.query<ConnectionRow, [string, string]>("SELECT * FROM connections WHERE workspace_id = ? AND name = ?"),
    choices: db.query<{ id: string; name: string }, [string, string]>(
      "SELECT id, name FROM connections WHERE workspace_id = ? AND piece_id = ? ORDER BY name, id",
    ),
    pieceOf: db.query<{ piece_id: string }, [string, string]>("SELECT piece_id FROM connections WHERE id = ? AND workspace_id = ?"),
    list: db.query<ConnectionRow, [SQLQueryBindings]>(`SELECT * FROM connections WHERE ${filter} ORDER BY name, id LIMIT $limit OFFSET $offset`),
    count: db.query<{ n: number }, [SQLQueryBindings]>(`SELECT COUNT(*) AS n FROM connections WHERE ${filter}`),
    update: db.query(
      `UPDATE connections SET name = $name, grant_type = $grant_type, status = $status, status_message = $status_message, config = $config, client_id = $client_id,
           managed_app = $managed_app, public_values = $public_values, secrets = $secrets, tokens = $tokens, token_expires_at = $token_expires_at, updated_at = $updated_at
         WHERE id = $id AND workspace_id = $workspace_id`,
    ),
    setTokens: db.query<null, [string, string | null, string, string]>(
      "UPDATE connections SET tokens = ?, token_expires_at = ?, status = 'active', status_message = NULL, updated_at = ? WHERE id = ?",
    ),
    setError: db.query<null, [string, number, number, string, string]>(
      "UPDATE connections SET status = 'error', status_message = ?, tokens = CASE WHEN ? = 1 THEN NULL ELSE tokens END, token_expires_at = CASE WHEN ? = 1 THEN NULL ELSE token_expires_at END, updated_at = ? WHERE id = ?",
    ),
    delete: db.query<null, [string, string]>("DELETE FROM connections WHERE id = ? AND workspace_id = ?"),
    takeLease: db.query<null, [string, number, string, number]>(
      "UPDATE connections SET refresh_lease = ?, refresh_lease_until = ? WHERE id = ? AND (refresh_lease IS NULL OR refresh_lease_until < ?)",
    ),
    releaseLease: db.query<null, [string, string]>(
      "UPDATE connections SET refresh_lease = NULL, refresh_lease_until = NULL WHERE id = ? AND refresh_lease = ?",
    ),
    // instr() narrows to workflows whose text mentions the id; the caller then checks the connectionId fields.
    liveUsers: db.query<WorkflowMention, [string, string, string]>(
      `SELECT w.id, w.name, w.definition AS draft, v.definition AS live FROM workflows w LEFT JOIN workflow_versions v ON v.id = w.latest_version_id
         WHERE w.workspace_id = ? AND w.status = 'active' AND (instr(w.definition, ?) > 0 OR instr(coalesce(v.definition, ''), ?) > 0) ORDER BY w.name`,
    ),
    insertState: db.query(
      "INSERT INTO oauth2_states (nonce, connection_id, workspace_id, code_verifier, redirect_uri, binding, expires_at, created_at) VALUES ($nonce, $connection_id, $workspace_id, $code_verifier, $redirect_uri, $binding, $expires_at, $created_at)",
    ),
    // DELETE … RETURNING makes consumption atomic: of two concurrent callbacks only one gets the row.
    consumeState: db.query<OAuth2StateRow, [string]>("DELETE FROM oauth2_states WHERE nonce = ? RETURNING *"),
    dropStatesOf: db.query<null, [string]>("DELETE FROM oauth2_states WHERE connection_id = ?"),
    pruneStates: db.query<null, [number]>("DELETE FROM oauth2_states WHERE expires_at < ?"),
    dropAllStates: db.query<null, []>("DELETE FROM oauth2_states"),
  };
};

export class SqliteConnections extends Prepared(statements) implements ConnectionRepository {
  insert(row: Omit<ConnectionRow, "refresh_lease" | "refresh_lease_until">) {
    // A refusal comes back as StorageError (SqliteConnection.do): the service asks for "unique".
    return this.c.do(() => void this.q.insert.run(bindRow(row)));
  }
  get(workspaceId: string, id: string) {
    return this.c.do(() => this.q.get.get(id, workspaceId));
  }
  getById(id: string) {
    return this.c.do(() => this.q.getById.get(id));
  }
  byName(workspaceId: string, name: string) {
    return this.c.do(() => this.q.byName.get(workspaceId, name));
  }
  choices(workspaceId: string, pieceId: string) {
    return this.c.do(() => this.q.choices.all(workspaceId, pieceId));
  }
  pieceOf(workspaceId: string, id: string) {
    return this.c.do(() => this.q.pieceOf.get(id, workspaceId)?.piece_id);
  }
  list(workspaceId: string, filter: ConnectionFilter, limit: number, offset: number) {
    const params = { workspace_id: workspaceId, piece_id: filter.pieceId ?? null, status: filter.status ?? null };
    return this.c.do(() => ({
      rows: this.q.list.all({ ...params, limit, offset }),
      total: countOf(this.q.count.get(params)),
    }));
  }
  update(row: ConnectionRow) {
    return this.c.do(
      () =>
        void this.q.update.run({
          id: row.id,
          workspace_id: row.workspace_id,
          name: row.name,
          grant_type: row.grant_type,
          status: row.status,
          status_message: row.status_message,
          config: row.config,
          client_id: row.client_id,
          managed_app: row.managed_app,
          public_values: row.public_values,
          secrets: row.secrets,
          tokens: row.tokens,
          token_expires_at: row.token_expires_at,
          updated_at: row.updated_at,
        }),
    );
  }
  setTokens(id: string, tokens: string, expiresAt: string | null, at: string) {
    return this.c.do(() => void this.q.setTokens.run(tokens, expiresAt, at, id));
  }
  setError(id: string, message: string, dropTokens: boolean, at: string) {
    return this.c.do(() => void this.q.setError.run(message, dropTokens ? 1 : 0, dropTokens ? 1 : 0, at, id));
  }
  delete(workspaceId: string, id: string) {
    return this.c.do(() => this.q.delete.run(id, workspaceId).changes > 0);
  }
  takeLease(id: string, lease: string, until: number, now: number) {
    return this.c.do(() => this.q.takeLease.run(lease, until, id, now).changes > 0);
  }
  releaseLease(id: string, lease: string) {
    return this.c.do(() => void this.q.releaseLease.run(id, lease));
  }
  liveWorkflowsMentioning(workspaceId: string, connectionId: string) {
    return this.c.do(() => this.q.liveUsers.all(workspaceId, connectionId, connectionId));
  }
  insertState(row: OAuth2StateRow) {
    return this.c.do(() => void this.q.insertState.run(bindRow(row)));
  }
  consumeState(nonce: string) {
    return this.c.do(() => this.q.consumeState.get(nonce));
  }
  dropStatesOf(connectionId: string) {
    return this.c.do(() => void this.q.dropStatesOf.run(connectionId));
  }
  dropAllStates() {
    return this.c.do(() => void this.q.dropAllStates.run());
  }
  pruneStates(now: number) {
    return this.c.do(() => void this.q.pruneStates.run(now));
  }
}
