/**
 * Checks the credential values of a create or update against the piece's auth declaration and splits them
 * into what may be shown (client id, basic username, non-secret custom values, OAuth2 settings) and what is
 * stored encrypted (client secret, API key, password, secret custom values). Every refusal names what was
 * wrong and what the piece accepts.
 */
import { AppError } from "../../http/errors";
import type { AuthDef, OAuth2AuthDef, PieceDef, PropertyDef } from "../../pieces-sdk/types";
import type { AuthKind, GrantType } from "../../store/connections";
import type { ManagedApps } from "./managed-apps";

export interface OAuth2Settings {
  authUrl?: string;
  tokenUrl?: string;
  scope?: string;
  grantType?: GrantType;
}

/** The auth values a client may send on create (all optional here; which are required depends on the piece). */
export interface CredentialInput {
  clientId?: string;
  clientSecret?: string;
  apiKey?: string;
  username?: string;
  password?: string;
  values?: Record<string, unknown>;
  config?: OAuth2Settings;
}

export interface PublicValues {
  username?: string;
  values?: Record<string, unknown>;
}

export interface SecretValues {
  clientSecret?: string;
  apiKey?: string;
  password?: string;
  values?: Record<string, unknown>;
}

export interface PreparedCredentials {
  authKind: AuthKind;
  grantType: GrantType | null;
  config: OAuth2Settings;
  clientId: string | null;
  managedApp: boolean;
  publicValues: PublicValues;
  secrets: SecretValues;
}

const FIELDS_BY_KIND: Record<AuthKind, string[]> = {
  oauth2: ["clientId", "clientSecret", "config"],
  api_key: ["apiKey"],
  basic: ["username", "password"],
  custom: ["values"],
};

const KIND_NAMES: Record<AuthKind, string> = { oauth2: "OAuth2", api_key: "an API key", basic: "basic auth (username and password)", custom: "custom fields" };

const invalid = (message: string) => new AppError("VALIDATION_FAILED", message);

/** The piece's auth declaration; refuses pieces that declare none. */
export function authOf(piece: PieceDef, piecesWithAuth: () => string[]): AuthDef {
  if (!piece.auth) {
    throw invalid(`piece "${piece.id}" declares no authentication, so it takes no connection; pieces that do: ${piecesWithAuth().join(", ") || "none"}`);
  }
  return piece.auth;
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "https:" || url.protocol === "http:") && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}

function checkUrl(field: string, value: string | undefined) {
  if (value !== undefined && !isHttpUrl(value))
    throw invalid(`${field} "${value.slice(0, 200)}" is not an http(s) URL without user info; use e.g. https://provider.example.com/oauth/authorize`);
}

export const grantTypesOf = (auth: OAuth2AuthDef): GrantType[] => (auth.grantTypes?.length ? auth.grantTypes : ["authorization_code"]);

function prepareOAuth2(piece: PieceDef, auth: OAuth2AuthDef, input: CredentialInput, managedApps: ManagedApps): PreparedCredentials {
  const config = { ...(input.config ?? {}) };
  const grants = grantTypesOf(auth);
  const grantType = config.grantType ?? grants[0];
  if (!grants.includes(grantType)) {
    throw invalid(`config.grantType "${grantType}" is not supported by piece "${piece.id}"; it supports: ${grants.join(", ")}`);
  }
  if (auth.fromConnectionConfig) {
    checkUrl("config.authUrl", config.authUrl);
    checkUrl("config.tokenUrl", config.tokenUrl);
    if (!config.tokenUrl)
      throw invalid(
        `piece "${piece.id}" takes its token URL from the connection: config.tokenUrl is required (with config.authUrl and optionally config.scope)`,
      );
    if (grantType === "authorization_code" && !config.authUrl) {
      throw invalid(
        `piece "${piece.id}" takes its authorize URL from the connection: config.authUrl is required for the authorization_code grant (client_credentials needs only config.tokenUrl)`,
      );
    }
  } else {
    const misplaced = (["authUrl", "tokenUrl"] as const).filter((k) => config[k] !== undefined);
    if (misplaced.length > 0) {
      throw invalid(
        `piece "${piece.id}" declares its own authorize and token URLs; config.${misplaced.join(" and config.")} cannot be set (only config.scope and config.grantType apply; URLs from the connection are for pieces such as "oauth2")`,
      );
    }
  }
  // A managed app is the instance's: never for pieces whose URLs come from the user, never for client_credentials
  // (that would hand every user the operator's own identity at the provider).
  const managed = !auth.fromConnectionConfig && grantType === "authorization_code" ? managedApps.get(piece.id) : undefined;
  if (!input.clientId) {
    if (!managed) {
      const why =
        grantType === "client_credentials"
          ? "the client_credentials grant needs clientId and clientSecret"
          : `no managed OAuth app is configured for piece "${piece.id}" (WEFT_OAUTH_APPS)`;
      throw invalid(
        `clientId is required: ${why}; send clientId and clientSecret from the app you registered with the provider (redirect URI: see docs/connections.md)`,
      );
    }
    if (input.clientSecret !== undefined)
      throw invalid(`clientSecret without clientId: send both to use your own OAuth app, or neither to use the instance's managed app for "${piece.id}"`);
  }
  if (grantType === "client_credentials" && !input.clientSecret) throw invalid("clientSecret is required for the client_credentials grant");
  if (config.scope !== undefined) config.scope = config.scope.trim();
  config.grantType = grantType;
  return {
    authKind: "oauth2",
    grantType,
    config,
    clientId: input.clientId ?? null,
    managedApp: !input.clientId,
    publicValues: {},
    secrets: input.clientSecret ? { clientSecret: input.clientSecret } : {},
  };
}

function checkCustomValue(name: string, prop: PropertyDef, value: unknown) {
  const expected =
    prop.type === "integer" || prop.type === "number" ? "number" : prop.type === "boolean" ? "boolean" : prop.type === "string" ? "string" : undefined;
  if (expected && typeof value !== expected) throw invalid(`values.${name} must be a ${prop.type}; got ${JSON.stringify(value)?.slice(0, 60)}`);
  if (prop.type === "integer" && !Number.isInteger(value)) throw invalid(`values.${name} must be an integer; got ${value}`);
  if (prop.enum && !prop.enum.includes(value))
    throw invalid(`values.${name} must be one of ${prop.enum.map((v) => JSON.stringify(v)).join(", ")}; got ${JSON.stringify(value)?.slice(0, 60)}`);
}

function prepareCustom(piece: PieceDef, props: Record<string, PropertyDef>, input: CredentialInput): PreparedCredentials {
  const values = input.values ?? {};
  const names = Object.keys(props);
  const unknown = Object.keys(values).filter((k) => !Object.hasOwn(props, k));
  if (unknown.length > 0)
    throw invalid(
      `unknown field ${unknown.map((k) => `values.${k}`).join(", ")} for piece "${piece.id}"; its connection fields: ${names.join(", ") || "none"}`,
    );
  const missing = names.filter((k) => props[k].required && (values[k] === undefined || values[k] === null || values[k] === ""));
  if (missing.length > 0)
    throw invalid(`piece "${piece.id}" needs ${missing.map((k) => `values.${k}`).join(", ")}; its connection fields: ${names.join(", ")}`);
  const shown: Record<string, unknown> = {};
  const hidden: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    checkCustomValue(name, props[name], value);
    // Anything declared with Property.secretText is a secret; the rest is shown back like a username.
    (props[name].propertyType === "secret_text" ? hidden : shown)[name] = value;
  }
  return {
    authKind: "custom",
    grantType: null,
    config: {},
    clientId: null,
    managedApp: false,
    publicValues: Object.keys(shown).length ? { values: shown } : {},
    secrets: Object.keys(hidden).length ? { values: hidden } : {},
  };
}

/** Validates create input against the piece's auth declaration. Throws VALIDATION_FAILED naming the fault. */
export function prepareCredentials(piece: PieceDef, auth: AuthDef, input: CredentialInput, managedApps: ManagedApps): PreparedCredentials {
  const allowed = FIELDS_BY_KIND[auth.kind];
  const given = (Object.keys(input) as Array<keyof CredentialInput>).filter((k) => input[k] !== undefined);
  const wrong = given.filter((k) => !allowed.includes(k));
  if (wrong.length > 0) {
    throw invalid(
      `piece "${piece.id}" authenticates with ${KIND_NAMES[auth.kind]}; ${wrong.join(", ")} ${wrong.length > 1 ? "do" : "does"} not apply. Fields for this piece: ${allowed.join(", ")}`,
    );
  }
  switch (auth.kind) {
    case "oauth2":
      return prepareOAuth2(piece, auth, input, managedApps);
    case "api_key":
      if (!input.apiKey) throw invalid(`piece "${piece.id}" authenticates with an API key: apiKey is required`);
      return { authKind: "api_key", grantType: null, config: {}, clientId: null, managedApp: false, publicValues: {}, secrets: { apiKey: input.apiKey } };
    case "basic":
      if (input.username === undefined || input.password === undefined) {
        throw invalid(`piece "${piece.id}" authenticates with basic auth: username and password are required`);
      }
      return {
        authKind: "basic",
        grantType: null,
        config: {},
        clientId: null,
        managedApp: false,
        publicValues: { username: input.username },
        secrets: { password: input.password },
      };
    case "custom":
      return prepareCustom(piece, auth.props, input);
  }
}

/** The create input that reproduces stored credentials (so an update can merge a patch over it and re-validate). */
export function toInput(prepared: PreparedCredentials): CredentialInput {
  const input: CredentialInput = {};
  switch (prepared.authKind) {
    case "oauth2":
      if (prepared.clientId) input.clientId = prepared.clientId;
      if (prepared.secrets.clientSecret) input.clientSecret = prepared.secrets.clientSecret;
      input.config = { ...prepared.config };
      break;
    case "api_key":
      input.apiKey = prepared.secrets.apiKey;
      break;
    case "basic":
      input.username = prepared.publicValues.username;
      input.password = prepared.secrets.password;
      break;
    case "custom":
      input.values = { ...prepared.publicValues.values, ...prepared.secrets.values };
      break;
  }
  return input;
}

/** Merges a patch over stored credentials: `config` and `values` merge key by key, other fields replace. */
export function mergeInput(base: CredentialInput, patch: CredentialInput): CredentialInput {
  const merged: CredentialInput = { ...base };
  for (const [key, value] of Object.entries(patch) as Array<[keyof CredentialInput, any]>) {
    if (value === undefined) continue;
    if (key === "config") merged.config = { ...base.config, ...value };
    else if (key === "values") merged.values = { ...base.values, ...value };
    else (merged as any)[key] = value;
  }
  return merged;
}
