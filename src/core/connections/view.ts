/**
 * What the API shows of a connection. Secrets and tokens never leave: each one that is set appears in
 * `credentials` as the fixed mask, which reveals neither its length nor any character.
 */
import type { ConnectionRow } from "../../store/connections";
import { parseJson } from "./context";
import type { OAuth2Settings, PublicValues } from "./credentials";

export const MASK = "********";

export interface ConnectionView {
  id: string;
  workspaceId: string;
  pieceId: string;
  name: string;
  authKind: ConnectionRow["auth_kind"];
  grantType: ConnectionRow["grant_type"];
  status: ConnectionRow["status"];
  statusMessage: string | null;
  config: OAuth2Settings;
  clientId: string | null;
  managedApp: boolean;
  username?: string;
  values?: Record<string, unknown>;
  credentials: Record<string, string>;
  tokenExpiresAt: string | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * `secretFields` are the names of the stored secrets (read from the decrypted blob by the caller, which
 * knows them anyway); secret custom values appear under `values` masked.
 */
export function connectionView(row: ConnectionRow, secretFields: { secrets: string[]; secretValues: string[]; tokens: string[] }): ConnectionView {
  const shown = parseJson<PublicValues>(row.public_values, {});
  const credentials: Record<string, string> = {};
  for (const field of [...secretFields.secrets, ...secretFields.tokens]) credentials[field] = MASK;
  const values =
    shown.values || secretFields.secretValues.length ? { ...shown.values, ...Object.fromEntries(secretFields.secretValues.map((k) => [k, MASK])) } : undefined;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    pieceId: row.piece_id,
    name: row.name,
    authKind: row.auth_kind,
    grantType: row.grant_type,
    status: row.status,
    statusMessage: row.status_message,
    config: parseJson<OAuth2Settings>(row.config, {}),
    clientId: row.client_id,
    managedApp: row.managed_app === 1,
    ...(shown.username !== undefined ? { username: shown.username } : {}),
    ...(values ? { values } : {}),
    credentials,
    tokenExpiresAt: row.token_expires_at,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
