/**
 * Loads user pieces from WEFT_PIECES_DIR at start-up. Each `*.ts`/`*.js`/`*.mjs` file (or folder with an
 * `index.ts`/`index.js`) default-exports a piece: the result of `definePiece`, a plain PieceDef object, or a
 * factory `(sdk) => PieceDef`. `import ... from "weft/sdk"` resolves to the SDK through a Bun runtime
 * plugin, so the same file works from source and inside the compiled binary.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as sdkModule from "../pieces-sdk";
import { definePiece, PieceDefinitionError, sdk } from "../pieces-sdk";
import type { PieceDef } from "../pieces-sdk/types";

export class PieceLoadError extends Error {}

/** Module names a user piece may import the SDK by. */
export const SDK_MODULES = ["weft/sdk", "weft"];

let pluginInstalled = false;
function installSdkModule() {
  if (pluginInstalled) return;
  pluginInstalled = true;
  Bun.plugin({
    name: "weft-sdk",
    setup(build) {
      for (const name of SDK_MODULES) build.module(name, () => ({ exports: { ...sdkModule, default: sdk }, loader: "object" }));
    },
  });
}

const PIECE_FILE = /\.(ts|js|mjs)$/;
const SKIP = /(\.d\.ts|\.test\.(ts|js)|\.spec\.(ts|js))$/;

function pieceFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new PieceLoadError(`WEFT_PIECES_DIR "${dir}" is not a directory`);
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    if (entry.startsWith(".") || entry === "node_modules") continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      const index = ["index.ts", "index.js", "index.mjs"].map((f) => join(path, f)).find(existsSync);
      if (index) files.push(index);
    } else if (PIECE_FILE.test(entry) && !SKIP.test(entry)) files.push(path);
  }
  return files;
}

/** Turns a module's default export into a checked PieceDef. */
export function pieceFromExport(exported: unknown, file: string): PieceDef {
  let value = exported;
  if (typeof value === "function") value = (value as (s: typeof sdk) => unknown)(sdk);
  if (!value || typeof value !== "object") {
    throw new PieceLoadError(
      `${file}: the default export must be a piece (definePiece({...}), a plain piece object, or (sdk) => piece); got ${value === undefined ? "nothing" : typeof value}`,
    );
  }
  try {
    // definePiece is idempotent on its own output and checks plain objects the same way.
    return definePiece(value as any);
  } catch (error) {
    if (error instanceof PieceDefinitionError) throw new PieceLoadError(`${file}: ${error.message}`);
    throw error;
  }
}

export async function loadPiecesDir(dir: string): Promise<PieceDef[]> {
  installSdkModule();
  const pieces: PieceDef[] = [];
  const seen = new Map<string, string>();
  for (const file of pieceFiles(dir)) {
    let module: any;
    try {
      module = await import(pathToFileURL(file).href);
    } catch (error) {
      throw new PieceLoadError(`${file}: could not be loaded: ${(error as Error)?.message ?? error}`);
    }
    const piece = pieceFromExport(module.default, file);
    const other = seen.get(piece.id);
    if (other) throw new PieceLoadError(`${file}: piece id "${piece.id}" is already declared by ${other}; one version per piece id`);
    seen.set(piece.id, file);
    pieces.push(piece);
  }
  return pieces;
}
