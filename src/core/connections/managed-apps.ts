/**
 * Managed OAuth apps (docs/connections.md "Managed OAuth apps"): the operator registers one OAuth app per
 * provider and lists it in the JSON file named by WEFT_OAUTH_APPS, so users connect without a client id of
 * their own.
 *
 *   { "github": { "clientId": "Iv1.abc", "clientSecret": "…" } }
 *
 * Keys are piece ids. A managed app is only ever used with the piece's own declared authorize and token
 * URLs — never with URLs taken from a connection — so the instance's client secret cannot be sent to an
 * address a user chose. The secret stays in the file; it is never copied into the database.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "../../config";

export interface ManagedApp {
  clientId: string;
  clientSecret?: string;
}

export class ManagedApps {
  constructor(private readonly apps: ReadonlyMap<string, ManagedApp> = new Map()) {}

  /** Reads and checks the file; any fault stops start-up with a message naming the file and the entry. */
  static load(path: string | undefined): ManagedApps {
    if (!path) return new ManagedApps();
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      throw new ConfigError(`WEFT_OAUTH_APPS=${path} could not be read as JSON: ${(error as Error).message}`);
    }
    return ManagedApps.from(parsed, `WEFT_OAUTH_APPS=${path}`);
  }

  static from(value: unknown, source = "managed OAuth apps"): ManagedApps {
    const shape = `{"<pieceId>": {"clientId": "…", "clientSecret": "…"}}`;
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new ConfigError(`${source} must be a JSON object like ${shape}`);
    const apps = new Map<string, ManagedApp>();
    for (const [pieceId, entry] of Object.entries(value)) {
      const app = entry as Record<string, unknown>;
      if (!app || typeof app !== "object" || typeof app.clientId !== "string" || app.clientId === "") {
        throw new ConfigError(`${source}: entry "${pieceId}" needs a non-empty "clientId"; the file looks like ${shape}`);
      }
      if (app.clientSecret !== undefined && typeof app.clientSecret !== "string")
        throw new ConfigError(`${source}: entry "${pieceId}" has a clientSecret that is not a string`);
      const unknown = Object.keys(app).filter((k) => k !== "clientId" && k !== "clientSecret");
      if (unknown.length > 0) throw new ConfigError(`${source}: entry "${pieceId}" has unknown keys ${unknown.join(", ")}; allowed: clientId, clientSecret`);
      apps.set(pieceId, { clientId: app.clientId, ...(app.clientSecret ? { clientSecret: app.clientSecret as string } : {}) });
    }
    return new ManagedApps(apps);
  }

  get(pieceId: string): ManagedApp | undefined {
    return this.apps.get(pieceId);
  }

  pieceIds(): string[] {
    return [...this.apps.keys()];
  }
}
