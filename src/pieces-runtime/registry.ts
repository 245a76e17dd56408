/**
 * The piece registry: the pieces this server runs — the built-ins, user pieces from WEFT_PIECES_DIR (one version
 * each) and installed packages (several versions side by side). Pins resolve against it: the exact
 * version when held, else the newest of the same major at least the pin.
 */
import type { Config } from "../config";
import type { ActionDef, PieceDef, TriggerDef } from "../pieces-sdk/types";
import { builtinPieces } from "../../pieces";
import { loadPiecesDir } from "./loader";
import { compareSemver, parseSemver, satisfiesPin } from "./semver";

export class PieceRegistry {
  /** The newest version of each piece: what blank pins get and what catalogs list. */
  private readonly pieces = new Map<string, PieceDef>();
  /** Every installed version of each piece (built-ins and WEFT_PIECES_DIR pieces have one). */
  private readonly versions = new Map<string, Map<string, PieceDef>>();
  /** Bumped on every change so caches keyed on the registry (projections) can tell it changed. */
  generation = 0;

  constructor(pieces: PieceDef[] = []) {
    for (const piece of pieces) this.register(piece);
  }

  /** Adds a piece as the only version of its id; a piece with the same id is replaced (built-ins, WEFT_PIECES_DIR). */
  register(piece: PieceDef): void {
    this.versions.set(piece.id, new Map([[piece.version, piece]]));
    this.pieces.set(piece.id, piece);
    this.generation++;
  }

  /** Adds one version beside the others of its id (installed packages: several versions side by side). */
  addVersion(piece: PieceDef): void {
    const versions = this.versions.get(piece.id) ?? new Map<string, PieceDef>();
    versions.set(piece.version, piece);
    this.versions.set(piece.id, versions);
    this.pieces.set(piece.id, newest(versions));
    this.generation++;
  }

  /** Removes one version; the id goes when its last version does. */
  removeVersion(id: string, version: string): void {
    const versions = this.versions.get(id);
    if (!versions?.delete(version)) return;
    if (versions.size === 0) {
      this.versions.delete(id);
      this.pieces.delete(id);
    } else this.pieces.set(id, newest(versions));
    this.generation++;
  }

  /**
   * The piece a step runs: without a pin the newest version; with one, that exact version when installed,
   * else the newest that satisfies it (same major, at least the pin).
   */
  get(id: string, pin?: string): PieceDef | undefined {
    if (pin === undefined || pin.trim() === "") return this.pieces.get(id);
    const versions = this.versions.get(id);
    if (!versions) return undefined;
    const exact = versions.get(pin.trim());
    if (exact) return exact;
    let best: PieceDef | undefined;
    for (const piece of versions.values()) {
      if (satisfiesPin(piece.version, pin) && (!best || newer(piece, best))) best = piece;
    }
    return best;
  }

  /** Every version held of a piece, newest first. */
  versionsOf(id: string): PieceDef[] {
    return [...(this.versions.get(id)?.values() ?? [])].sort((a, b) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0));
  }

  /** Every piece (its newest version), ordered by id. */
  list(): PieceDef[] {
    return [...this.pieces.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  ids(): string[] {
    return this.list().map((p) => p.id);
  }

  /** The served version (what blank pins are filled with): the newest held. */
  servedVersion(id: string): string | undefined {
    return this.pieces.get(id)?.version;
  }

  /** Can this server run a step pinned to `pin`? A blank pin is runnable when the piece exists. */
  isRunnable(id: string, pin?: string): boolean {
    return this.get(id, pin) !== undefined;
  }

  action(pieceId: string, actionId: string, pin?: string): ActionDef | undefined {
    const actions = this.get(pieceId, pin)?.actions;
    return actions && Object.hasOwn(actions, actionId) ? actions[actionId] : undefined;
  }

  trigger(pieceId: string, triggerId: string, pin?: string): TriggerDef | undefined {
    const triggers = this.get(pieceId, pin)?.triggers;
    return triggers && Object.hasOwn(triggers, triggerId) ? triggers[triggerId] : undefined;
  }
}

function newer(a: PieceDef, b: PieceDef): boolean {
  const x = parseSemver(a.version);
  const y = parseSemver(b.version);
  return !!x && !!y && compareSemver(x, y) > 0;
}

/** The newest of a non-empty set of versions. */
function newest(versions: Map<string, PieceDef>): PieceDef {
  const [first, ...rest] = versions.values();
  let best = first as PieceDef;
  for (const piece of rest) if (newer(piece, best)) best = piece;
  return best;
}

/** A registry of every built-in piece. */
export function builtinRegistry(): PieceRegistry {
  return new PieceRegistry(builtinPieces());
}

/** Built-ins plus the user pieces found in WEFT_PIECES_DIR (config.piecesDir); a user piece may replace a built-in. */
export async function loadRegistry(config: Pick<Config, "piecesDir">): Promise<PieceRegistry> {
  const registry = builtinRegistry();
  if (config.piecesDir) for (const piece of await loadPiecesDir(config.piecesDir)) registry.register(piece);
  return registry;
}
