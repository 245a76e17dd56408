/**
 * A cluster's claims (docs/scaling.md): which runs this instance takes. Two kinds, both by
 * `UPDATE … FOR UPDATE SKIP LOCKED` in the store, so two instances never take the same run:
 * - orphans: the unfinished runs of instances that are not alive (their lease lapsed, or they stopped and
 *   left them), taken at start and after each heartbeat and recovered as a restart would (recovery.ts);
 * - work: runs nobody holds (an `api` instance's intake, runs copied from SQLite), a batch at a time while
 *   this instance has room, when the bus says there is some, after each heartbeat and as runs here end.
 * A claimed run whose step pieces (at their pins) this instance lacks is given back and not taken here again.
 * An `api` instance claims nothing.
 */
import { BoundedMap } from "../lib/bounded-map";
import type { FlowVersionT } from "../schema/workflow";
import type { RunRow } from "../store/run-rows";
import type { ClusterLinks } from "./cluster-links";
import type { ClusterMembership, RunTable } from "./run-table";

/** Runs a worker takes from the shared queue at once: enough to keep it busy, few enough to share them out. */
const CLAIM_BATCH = 64;
/** Orphans taken per statement. */
const ORPHAN_BATCH = 500;
/** Runs given back for a missing piece that are remembered (not claimed again here). */
const MAX_CANNOT_RUN = 200;

type StepPiece = { pieceId: string; pieceVersion?: string };

export interface ClaimLinks {
  /** Recovers claimed rows by the restart rules (queue, re-arm, continue, or fail); never rejects. */
  recover(rows: RunRow[]): Promise<void>;
  /** False before the engine started and once it stops: nothing is claimed then. */
  ready(): boolean;
  /** Calls `listener` when a run ends here (run-lifecycle.ts). */
  onFinished(listener: (run: RunRow) => void): void;
}

export class Claims {
  /**
   * Runs may wait in the shared queue: the owners' read (`orphans`) saw one nobody holds, the bus said some
   * arrived, or the last claim took a full batch. False spares the claim's UPDATE (at start ~13 ms on
   * PostgreSQL, its first write in the session) when nothing waits.
   */
  private moreWork = true;
  /**
   * The highest id of the last full claim: the next claim looks beyond it. The oldest runs of the queue are
   * taken first, and the runs taken and ended before them leave index entries PostgreSQL removes only at its
   * next vacuum: a claim from the start walked over all of them, slower with every run of a backlog (a drain
   * of 80,000 runs fell to ~520 runs a second). From the start again when a claim beyond it finds too few,
   * and after each heartbeat (runs given back or left by a dead instance may have lower ids).
   */
  private cursor = "";
  /** Runs given back because this instance lacks a piece they need (oldest first, bounded). */
  private readonly cannotRun = new Set<string>();
  /** The claim from the shared queue on its way (one at a time), and whether another was asked for meanwhile. */
  private working: Promise<number> | null = null;
  private askedAgain = false;
  private missingByDefinition = { generation: -1, map: new BoundedMap<string, StepPiece | null>(256) };

  constructor(
    private readonly t: RunTable,
    private readonly cluster: ClusterMembership,
    private readonly links: ClusterLinks,
    private readonly engine: ClaimLinks,
  ) {
    // A run that ends here makes room: take more from the shared queue while it has some.
    engine.onFinished(() => {
      if (this.moreWork && t.queue.pendingCount < CLAIM_BATCH / 2) this.workLogged();
    });
  }

  /** After a heartbeat: the orphans of instances that died, recovered here, then work from the shared queue. */
  async afterHeartbeat(): Promise<number> {
    if (!this.engine.ready()) return 0;
    const rows = await this.orphans();
    // Not waited for: recovery fails a run it cannot recover itself and never rejects.
    void this.engine.recover(rows);
    if (rows.length) this.t.o.log.info("took over runs of instances that stopped", { runs: rows.length });
    this.cursor = "";
    return rows.length + (await this.work());
  }

  /** The bus said runs wait for a worker. */
  workArrived(): void {
    this.moreWork = true;
    this.workLogged();
  }

  private workLogged(): void {
    this.work().catch((error) => this.t.o.log.warn("could not take runs from the shared queue", { error: String((error as Error)?.message ?? error) }));
  }

  /**
   * Takes runs nobody holds while this instance has room: up to a batch, never more than a batch waiting here.
   * One claim at a time (each counts the room the one before left); asked again meanwhile, it claims again after.
   */
  work(): Promise<number> {
    if (this.working) {
      this.askedAgain = true;
      return this.working;
    }
    const working = (async () => {
      let taken = 0;
      try {
        do {
          this.askedAgain = false;
          taken += await this.workOnce();
        } while (this.askedAgain && this.moreWork);
      } finally {
        this.working = null;
      }
      return taken;
    })();
    this.working = working;
    return working;
  }

  private async workOnce(): Promise<number> {
    const t = this.t;
    if (this.cluster.role === "api" || !this.engine.ready() || !this.moreWork) return 0;
    const waiting = t.queue.pendingCount;
    const batch = Math.min((t.o.maxActiveRuns ?? 1000) - t.executing.size - waiting, CLAIM_BATCH - waiting);
    if (batch <= 0) return 0; // looked at again when a run here ends
    let claimed = await t.claims.claim(this.cluster.instanceId, null, batch, [...this.cannotRun], this.cursor);
    if (claimed.length < batch && this.cursor) {
      this.cursor = "";
      claimed = claimed.concat(await t.claims.claim(this.cluster.instanceId, null, batch - claimed.length, [...this.cannotRun]));
    }
    if (claimed.length === batch) for (const row of claimed) if (row.id > this.cursor) this.cursor = row.id;
    const rows = await this.runnableHere(claimed);
    for (const row of rows) this.links.tookFromIntake(row.id);
    // Not waited for: recovery fails a run it cannot recover itself and never rejects.
    void this.engine.recover(rows);
    // Fewer than asked: the shared queue is empty until the bus or a heartbeat says otherwise.
    this.moreWork = claimed.length === batch;
    return rows.length;
  }

  /** Takes the unfinished runs of owners that are not alive, oldest first (recovered by the caller). */
  async orphans(): Promise<RunRow[]> {
    if (this.cluster.role === "api") return [];
    const t = this.t;
    // Owners first, then who is alive: an instance registers before it starts a run, so an owner read here
    // that was not yet alive in the list read after cannot be a newcomer. Runs nobody holds are `work`'s; a
    // run that arrives after this read is announced on the bus (workArrived).
    const { owners, unowned } = await t.claims.unfinishedHolders();
    this.moreWork = unowned;
    const alive = this.cluster.aliveIds();
    const claimed: RunRow[] = [];
    for (const from of owners.filter((owner) => !alive.has(owner))) {
      for (;;) {
        const batch = await t.claims.claim(this.cluster.instanceId, from, ORPHAN_BATCH);
        claimed.push(...(await this.runnableHere(batch)));
        if (batch.length < ORPHAN_BATCH) break;
      }
    }
    return claimed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Keeps the claimed runs whose step pieces this instance holds; gives the others back for an instance that has them. */
  private async runnableHere(rows: RunRow[]): Promise<RunRow[]> {
    const kept: RunRow[] = [];
    let released = false;
    for (const row of rows) {
      const missing = await this.missingPiece(row);
      if (!missing) {
        kept.push(row);
        continue;
      }
      await this.t.claims.release(row.id, this.cluster.instanceId);
      this.cannotRun.add(row.id);
      if (this.cannotRun.size > MAX_CANNOT_RUN) this.cannotRun.delete(this.cannotRun.values().next().value as string);
      released = true;
      this.t.o.log.warn("a run needs a piece this instance does not hold; left for another instance", {
        runId: row.id,
        piece: missing.pieceVersion ? `${missing.pieceId}@${missing.pieceVersion}` : missing.pieceId,
      });
    }
    if (released) this.links.wakeWorkers();
    return kept;
  }

  /** The first step piece (at its pin) of the run's definition this instance lacks; remembered per definition. */
  private async missingPiece(row: RunRow): Promise<StepPiece | undefined> {
    const pieces = this.t.o.pieces;
    if (this.missingByDefinition.generation !== pieces.generation) this.missingByDefinition = { generation: pieces.generation, map: new BoundedMap(256) };
    const known = this.missingByDefinition.map.get(row.definition_hash);
    if (known !== undefined) return known ?? undefined;
    let missing: StepPiece | undefined;
    try {
      missing = stepPieces(await this.t.definitionOf(row)).find((step) => !pieces.isRunnable(step.pieceId, step.pieceVersion));
    } catch {
      missing = undefined; // recovery deals with a run whose definition cannot be read
    }
    this.missingByDefinition.map.set(row.definition_hash, missing ?? null);
    return missing;
  }
}

/** The pieces a definition's steps run, with their pins (the trigger's own piece is not run by an executing instance). */
function stepPieces(definition: FlowVersionT): StepPiece[] {
  const found: StepPiece[] = [];
  const visit = (value: unknown, isTrigger: boolean) => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, false);
      return;
    }
    if (!value || typeof value !== "object") return;
    const node = value as Record<string, unknown>;
    if (!isTrigger && typeof node.pieceId === "string" && typeof node.type === "string") {
      found.push({ pieceId: node.pieceId, pieceVersion: typeof node.pieceVersion === "string" ? node.pieceVersion : undefined });
    }
    // Configuration and sample data are the user's values: a "pieceId" there names nothing to run.
    for (const [key, child] of Object.entries(node)) if (key !== "config" && key !== "sampleData" && key !== "pinnedData") visit(child, false);
  };
  visit(definition.trigger, true);
  return found;
}
