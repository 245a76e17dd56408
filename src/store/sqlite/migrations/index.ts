/**
 * SQLite's numbered migrations, applied in order. Add a file and its line in ./files.ts, and the same version
 * in ../../postgres/migrations/; never edit a shipped one.
 */
import { inVersionOrder, type Migration } from "../../migration";
import * as files from "./files";

export const migrations: Migration[] = inVersionOrder(files);
