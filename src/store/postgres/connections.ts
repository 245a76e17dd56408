/** Connections, OAuth2 states and refresh leases on PostgreSQL (../connections.ts says what each answers). */
import type { ConnectionFilter, ConnectionRepository, ConnectionRow, OAuth2StateRow, WorkflowMention } from "../connections";
import type { PostgresConnection } from "./connection";

// $2 and $3 are only tested for NULL in one branch: PostgreSQL must be told they are text.
const FILTER = "workspace_id = $1 AND ($2::text IS NULL OR piece_id = $2) AND ($3::text IS NULL OR status = $3)";

/** The columns an update may change after the name, grant_type to token_expires_at, in the statements' order. */
const changeable = (row: Omit<ConnectionRow, "refresh_lease" | "refresh_lease_until">) => [
  row.grant_type,
  row.status,
  row.status_message,
  row.config,
  row.client_id,
  row.managed_app,
  row.public_values,
  row.secrets,
  row.tokens,
  row.token_expires_at,
];

export class PostgresConnections implements ConnectionRepository {
  constructor(private readonly c: PostgresConnection) {}

  async insert(row: Omit<ConnectionRow, "refresh_lease" | "refresh_lease_until">) {
    // A unique key's refusal comes back as StorageError "unique" (PostgresConnection): the service asks for it.
    await this.c.run(
      `INSERT INTO connections (id, org_id, workspace_id, piece_id, name, auth_kind, grant_type, status, status_message, config, client_id, managed_app, public_values, secrets, tokens, token_expires_at, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
      [row.id, row.org_id, row.workspace_id, row.piece_id, row.name, row.auth_kind, ...changeable(row), row.created_by, row.created_at, row.updated_at],
    );
  }
  get(workspaceId: string, id: string) {
    return this.c.get<ConnectionRow>("SELECT * FROM connections WHERE id = $1 AND workspace_id = $2", [id, workspaceId]);
  }
  getById(id: string) {
    return this.c.get<ConnectionRow>("SELECT * FROM connections WHERE id = $1", [id]);
  }
  byName(workspaceId: string, name: string) {
    return this.c.get<ConnectionRow>("SELECT * FROM connections WHERE workspace_id = $1 AND name = $2", [workspaceId, name]);
  }
  choices(workspaceId: string, pieceId: string) {
    return this.c.all<{ id: string; name: string }>("SELECT id, name FROM connections WHERE workspace_id = $1 AND piece_id = $2 ORDER BY name, id", [
      workspaceId,
      pieceId,
    ]);
  }
  async pieceOf(workspaceId: string, id: string) {
    return (await this.c.get<{ piece_id: string }>("SELECT piece_id FROM connections WHERE id = $1 AND workspace_id = $2", [id, workspaceId]))?.piece_id;
  }
  async list(workspaceId: string, filter: ConnectionFilter, limit: number, offset: number) {
    const params = [workspaceId, filter.pieceId ?? null, filter.status ?? null];
    const [rows, count] = await Promise.all([
      this.c.all<ConnectionRow>(`SELECT * FROM connections WHERE ${FILTER} ORDER BY name, id LIMIT $4 OFFSET $5`, [...params, limit, offset]),
      this.c.get<{ n: number }>(`SELECT count(*) AS n FROM connections WHERE ${FILTER}`, params),
    ]);
    return { rows, total: count?.n ?? 0 };
  }
  async update(row: ConnectionRow) {
    await this.c.run(
      `UPDATE connections SET name = $3, grant_type = $4, status = $5, status_message = $6, config = $7, client_id = $8, managed_app = $9,
         public_values = $10, secrets = $11, tokens = $12, token_expires_at = $13, updated_at = $14
       WHERE id = $1 AND workspace_id = $2`,
      [row.id, row.workspace_id, row.name, ...changeable(row), row.updated_at],
    );
  }
  async setTokens(id: string, tokens: string, expiresAt: string | null, at: string) {
    await this.c.run("UPDATE connections SET tokens = $1, token_expires_at = $2, status = 'active', status_message = NULL, updated_at = $3 WHERE id = $4", [
      tokens,
      expiresAt,
      at,
      id,
    ]);
  }
  async setError(id: string, message: string, dropTokens: boolean, at: string) {
    await this.c.run(
      `UPDATE connections SET status = 'error', status_message = $1, tokens = CASE WHEN $2::boolean THEN NULL ELSE tokens END,
         token_expires_at = CASE WHEN $2::boolean THEN NULL ELSE token_expires_at END, updated_at = $3 WHERE id = $4`,
      [message, dropTokens, at, id],
    );
  }
  async delete(workspaceId: string, id: string) {
    return (await this.c.run("DELETE FROM connections WHERE id = $1 AND workspace_id = $2", [id, workspaceId])) > 0;
  }
  async takeLease(id: string, lease: string, until: number, now: number) {
    // One statement: of instances racing for the lease, the row's lock lets one UPDATE match.
    const changed = await this.c.run(
      "UPDATE connections SET refresh_lease = $1, refresh_lease_until = $2 WHERE id = $3 AND (refresh_lease IS NULL OR refresh_lease_until < $4)",
      [lease, until, id, now],
    );
    return changed > 0;
  }
  async releaseLease(id: string, lease: string) {
    await this.c.run("UPDATE connections SET refresh_lease = NULL, refresh_lease_until = NULL WHERE id = $1 AND refresh_lease = $2", [id, lease]);
  }
  liveWorkflowsMentioning(workspaceId: string, connectionId: string) {
    // strpos() narrows to workflows whose text mentions the id; the caller then checks the connectionId fields.
    return this.c.all<WorkflowMention>(
      `SELECT w.id, w.name, w.definition AS draft, v.definition AS live FROM workflows w LEFT JOIN workflow_versions v ON v.id = w.latest_version_id
       WHERE w.workspace_id = $1 AND w.status = 'active' AND (strpos(w.definition, $2) > 0 OR strpos(coalesce(v.definition, ''), $2) > 0) ORDER BY w.name`,
      [workspaceId, connectionId],
    );
  }
  async insertState(row: OAuth2StateRow) {
    await this.c.insert(
      "oauth2_states",
      ["nonce", "connection_id", "workspace_id", "code_verifier", "redirect_uri", "binding", "expires_at", "created_at"],
      row,
    );
  }
  consumeState(nonce: string) {
    // DELETE … RETURNING makes consumption atomic: of two concurrent callbacks only one gets the row.
    return this.c.get<OAuth2StateRow>("DELETE FROM oauth2_states WHERE nonce = $1 RETURNING *", [nonce]);
  }
  async dropStatesOf(connectionId: string) {
    await this.c.run("DELETE FROM oauth2_states WHERE connection_id = $1", [connectionId]);
  }
  async dropAllStates() {
    await this.c.run("DELETE FROM oauth2_states");
  }
  async pruneStates(now: number) {
    await this.c.run("DELETE FROM oauth2_states WHERE expires_at < $1", [now]);
  }
}
