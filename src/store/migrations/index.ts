/** Numbered migrations, applied in order. Add a file and one line here; never edit a shipped one. */
import identity from "./001-identity";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [identity].sort((a, b) => a.version - b.version);
