/**
 * The fleet: the one version of each piece that the running workers load — the built-ins plus user
 * pieces from WEFT_PIECES_DIR. Pins resolve against it (DESIGN.md §3: same major, fleet ≥ pin).
 */
import type { Config } from "../config";
import type { ActionDef, PieceDef, TriggerDef } from "../pieces-sdk/types";
import { builtinPieces } from "../../pieces";
import { loadPiecesDir } from "./loader";
import { satisfiesPin } from "./semver";

export class PieceRegistry {
  private readonly pieces = new Map<string, PieceDef>();
  /** Bumped on every register so caches keyed on the registry (projections) can tell it changed. */
  generation = 0;

  constructor(pieces: PieceDef[] = []) {
    for (const piece of pieces) this.register(piece);
  }

  /** Adds a piece; a piece with the same id is replaced (one version per id in the fleet). */
  register(piece: PieceDef): void {
    this.pieces.set(piece.id, piece);
    this.generation++;
  }

  get(id: string): PieceDef | undefined {
    return this.pieces.get(id);
  }

  /** Every piece, ordered by id. */
  list(): PieceDef[] {
    return [...this.pieces.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  ids(): string[] {
    return this.list().map((p) => p.id);
  }

  /** The version the live fleet serves (what blank pins are filled with). */
  fleetVersion(id: string): string | undefined {
    return this.pieces.get(id)?.version;
  }

  /** Can the fleet run a step pinned to `pin`? A blank pin is runnable when the piece exists. */
  isRunnable(id: string, pin?: string): boolean {
    const piece = this.pieces.get(id);
    if (!piece) return false;
    if (pin === undefined || pin.trim() === "") return true;
    return satisfiesPin(piece.version, pin);
  }

  action(pieceId: string, actionId: string): ActionDef | undefined {
    const actions = this.pieces.get(pieceId)?.actions;
    return actions && Object.hasOwn(actions, actionId) ? actions[actionId] : undefined;
  }

  trigger(pieceId: string, triggerId: string): TriggerDef | undefined {
    const triggers = this.pieces.get(pieceId)?.triggers;
    return triggers && Object.hasOwn(triggers, triggerId) ? triggers[triggerId] : undefined;
  }
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
