/**
 * The pieces a cluster can run: what the workflow gate (publish, restore, the editor's save of a live
 * workflow) checks definitions against, and what blank pins are filled with. A run may execute on any instance
 * that executes runs (role `all` or `worker`), so a piece version counts only when this instance holds it and
 * every other such instance alive serves a version that satisfies it (same major, at least it) — as each
 * instance registers in the fleet with its pieces (core/fleet.ts). Alone (SQLite), this is the local registry.
 * The gate asks synchronously: the other instances are answered from the fleet's last reading of the registry
 * (core/fleet.ts reads it once a second in a cluster), never from the database while the gate waits.
 */
import type { PieceDef, TriggerDef } from "../pieces-sdk/types";
import type { PieceRegistry } from "../pieces-runtime/registry";
import { satisfiesPin } from "../pieces-runtime/semver";
import type { GatePieces } from "./workflows/validate";

/** Another instance that executes runs, as the fleet registry shows it. */
export interface PeerPieces {
  name: string;
  pieces: Array<{ id: string; version: string }>;
}

export class ClusterPieces implements GatePieces {
  constructor(
    /** This instance's registry (read per call: tests swap it). */
    private readonly registry: () => PieceRegistry,
    /** The other live instances that execute runs, as last read (no database call). */
    private readonly readPeers: () => PeerPieces[],
  ) {}

  private get local(): PieceRegistry {
    return this.registry();
  }

  private peers(): PeerPieces[] {
    return this.readPeers();
  }

  /** The other instances that serve no version of `id` satisfying `version`, by name. */
  lacking(id: string, version: string): string[] {
    return this.peers()
      .filter((peer) => !peer.pieces.some((p) => p.id === id && satisfiesPin(p.version, version)))
      .map((peer) => peer.name);
  }

  /** Why a step of `id` pinned to `pin` cannot run in the cluster although this instance holds the piece; undefined when it can, or when this instance lacks it. */
  whyNot(id: string, pin?: string): string | undefined {
    const piece = this.local.get(id, pin);
    if (!piece) return undefined;
    const version = pin?.trim() ? pin.trim() : piece.version;
    const lacking = this.lacking(id, version);
    if (lacking.length === 0) return undefined;
    return `piece "${id}" ${version} is not served by every instance that executes runs: ${lacking.join(", ")} lack it (install the same package there, or stop them)`;
  }

  get(id: string, pin?: string): PieceDef | undefined {
    const piece = this.local.get(id, pin);
    if (!piece) return undefined;
    return this.lacking(id, pin?.trim() ? pin.trim() : piece.version).length === 0 ? piece : undefined;
  }

  list(): PieceDef[] {
    return this.local.list().filter((piece) => this.servedVersion(piece.id) !== undefined);
  }

  /** The newest version held here that every other instance serves (what a blank pin is filled with). */
  servedVersion(id: string): string | undefined {
    return this.local.versionsOf(id).find((piece) => this.lacking(id, piece.version).length === 0)?.version;
  }

  isRunnable(id: string, pin?: string): boolean {
    return this.get(id, pin) !== undefined;
  }

  trigger(pieceId: string, triggerId: string): TriggerDef | undefined {
    return this.get(pieceId) ? this.local.trigger(pieceId, triggerId) : undefined;
  }
}
