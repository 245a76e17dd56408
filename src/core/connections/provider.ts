/**
 * Where a connection's OAuth2 requests go and with which client (docs/connections.md "Managed OAuth apps"): a
 * piece declaring auth.oauth2 supplies its URLs and default scopes; the generic piece takes
 * config.authUrl/tokenUrl/scope from the connection; a managed app's client is used only with the piece's own
 * declared URLs.
 */
import { AppError } from "../../http/errors";
import type { OAuth2AuthDef, PieceDef } from "../../pieces-sdk/types";
import type { ConnectionRow } from "../../store/connections";
import { sha256 } from "../../lib/ids";
import { describe, type ConnectionsContext } from "./context";
import type { OAuth2Settings, SecretValues } from "./credentials";
import type { ClientCredentials } from "./token-client";

export interface Provider {
  authorizeUrl: string | undefined;
  tokenUrl: string;
  scope: string;
  extraAuthorizeParams: Record<string, string>;
  client: ClientCredentials;
}

export function providerOf(
  ctx: ConnectionsContext,
  row: ConnectionRow,
  piece: PieceDef,
  auth: OAuth2AuthDef,
  config: OAuth2Settings,
  secrets: SecretValues,
): Provider {
  let client: ClientCredentials;
  if (row.managed_app === 1) {
    const app = auth.fromConnectionConfig ? undefined : ctx.managedApps.get(piece.id);
    if (!app) {
      throw new AppError(
        "UNPROCESSABLE",
        `${describe(row)} uses the instance's managed OAuth app for piece "${piece.id}", which is no longer configured (WEFT_OAUTH_APPS); set your own clientId and clientSecret with PATCH /api/connections/${row.id}`,
      );
    }
    client = app;
  } else {
    client = { clientId: row.client_id!, ...(secrets.clientSecret ? { clientSecret: secrets.clientSecret } : {}) };
  }
  const fromConnection = auth.fromConnectionConfig === true;
  return {
    authorizeUrl: fromConnection ? config.authUrl : auth.authorizeUrl,
    tokenUrl: fromConnection ? config.tokenUrl! : auth.tokenUrl,
    scope: config.scope ?? (auth.scopes ?? []).join(" "),
    extraAuthorizeParams: auth.extraAuthorizeParams ?? {},
    client,
  };
}

/** What an authorization was started against; if the connection's client or token URL changes meanwhile, the callback refuses. */
export const bindingOf = (provider: Provider) => sha256(`${provider.client.clientId}\n${provider.tokenUrl}\n${provider.authorizeUrl ?? ""}`);
