/**
 * The fleet: a `weft serve` process registers itself in the database when it starts — host, pid, version,
 * role and the pieces (id and version) it can run — and renews its heartbeat every `heartbeatSeconds`. An
 * instance whose heartbeat is older than three intervals is shown as not alive (it stopped without saying so:
 * a SIGKILL, a power cut); one silent for a day is forgotten. A clean stop removes its own row. Instances on
 * one PostgreSQL database see each other; on SQLite there is one. GET /api/fleet lists them.
 *
 * The heartbeat is also each instance's lease on the runs it owns: `aliveIds` says whose runs nobody may take,
 * and after each beat the listeners look for runs to take over (the engine's claims).
 *
 * The registry is read through the storage port, every call a promise; what the engine and the workflow gate
 * ask synchronously (`aliveIds`, `executingPeers`) is answered from the rows read at the last beat (read just
 * after this instance's own write, so the listeners after a beat see the registry as it was then) or at the
 * last look (`lookEveryMs`). A beat never overlaps the one before it.
 */
import type { Logger } from "../http/logger";
import { type Clock, systemClock } from "../lib/clock";
import { newId } from "../lib/ids";
import type { PieceRegistry } from "../pieces-runtime/registry";
import type { InstanceRepository, InstanceRow } from "../store/instances";
import type { Storage } from "../store/port";
import type { PeerPieces } from "./cluster-pieces";
import { hostname } from "node:os";

/** True when a process with this pid exists on this machine (an instance restarted here finds its old self dead at once). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Instances silent this long are removed from the registry. */
const FORGET_AFTER_MS = 24 * 3600_000;

export interface FleetInstance {
  id: string;
  hostname: string;
  pid: number;
  version: string;
  role: string;
  startedAt: string;
  lastHeartbeatAt: string;
  /** Heard from within three heartbeat intervals. */
  alive: boolean;
  /** This process. */
  self: boolean;
  pieces: Array<{ id: string; version: string }>;
}

export interface FleetOptions {
  /** The port the heartbeat writes through: one that slow work elsewhere does not hold up (src/store/storage.ts, `vitalStorageOf`). */
  storage: Storage;
  log: Logger;
  pieces: PieceRegistry;
  version: string;
  heartbeatSeconds: number;
  /** An instance silent this long is not alive: its runs and polls are taken over (default three heartbeats). */
  leaseSeconds?: number;
  /** This instance's id (the owner written on its runs); default a new one. */
  id?: string;
  /** What this instance does in a cluster (`weft serve --role`); default `all`. */
  role?: string;
  /** What heartbeats and leases are measured by (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
  /** In a cluster: how often the other instances' rows are read between beats (what `executingPeers` answers from); default only at beats. */
  lookEveryMs?: number;
}

export class Fleet {
  readonly id: string;
  private readonly store: InstanceRepository;
  private readonly leaseMs: number;
  private readonly beatListeners: Array<() => void> = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private lookTimer: ReturnType<typeof setInterval> | undefined;
  private expiryTimer: ReturnType<typeof setTimeout> | undefined;
  private startedAt = "";
  /** The registry as last read. */
  private rows: InstanceRow[] = [];
  /** The beat under way, and the look under way: neither starts again before it ends. */
  private beating: Promise<void> | undefined;
  private looking: Promise<void> | undefined;

  constructor(private readonly o: FleetOptions) {
    this.id = o.id ?? newId();
    this.store = o.storage.instances;
    this.leaseMs = (o.leaseSeconds ?? 3 * o.heartbeatSeconds) * 1000;
  }

  /** Called after every heartbeat of a started instance (the engine takes over runs of instances that died). */
  onBeat(listener: () => void): void {
    this.beatListeners.push(listener);
  }

  /**
   * The instances alive now, this one included: heard from within the lease, except one on this host whose
   * process is gone (a restart here need not wait out the lease of the process it replaces).
   */
  aliveIds(): Set<string> {
    const since = new Date(this.now() - this.leaseMs).toISOString();
    const here = hostname();
    const alive = new Set([this.id]);
    for (const row of this.rows) {
      if (row.heartbeat_at < since) continue;
      if (row.hostname === here && row.pid !== process.pid && !processExists(row.pid)) continue;
      alive.add(row.id);
    }
    return alive;
  }

  private now(): number {
    return (this.o.clock ?? systemClock).now();
  }

  /** The pieces this process can run, every installed version, in code-unit order (a first localeCompare sets up the collator: ~2 ms of every start). */
  private pieces(): Array<{ id: string; version: string }> {
    return this.o.pieces
      .ids()
      .flatMap((id) => this.o.pieces.versionsOf(id).map((piece) => ({ id, version: piece.version })))
      .sort((a, b) => (a.id === b.id ? byCodeUnits(a.version, b.version) : byCodeUnits(a.id, b.id)));
  }

  /** Registers this process and starts its heartbeat (`weft serve`); resolves once it is registered. */
  async start(): Promise<void> {
    if (this.timer) return;
    this.startedAt = new Date(this.now()).toISOString();
    await this.register();
    this.rows = await this.store.list();
    if (this.timer) return; // started twice at once
    // Beats and looks catch their own errors (logged): nothing to handle here.
    this.timer = setInterval(() => void this.beat(), this.o.heartbeatSeconds * 1000);
    this.timer.unref();
    if (this.o.lookEveryMs) {
      this.lookTimer = setInterval(() => void this.refresh(), this.o.lookEveryMs);
      this.lookTimer.unref();
    }
  }

  private async register(): Promise<void> {
    const at = new Date(this.now()).toISOString();
    await this.store.put({
      id: this.id,
      hostname: hostname(),
      pid: process.pid,
      version: this.o.version,
      role: this.o.role ?? "all",
      started_at: this.startedAt,
      heartbeat_at: at,
      pieces: JSON.stringify(this.pieces()),
    });
  }

  /** Renews the heartbeat (and the piece list, which installs change); registers again if the row was pruned. Never rejects. */
  beat(): Promise<void> {
    this.beating ??= this.beatOnce().finally(() => {
      this.beating = undefined;
    });
    return this.beating;
  }

  private async beatOnce(): Promise<void> {
    try {
      await this.register();
      await this.store.deleteSilentSince(new Date(this.now() - FORGET_AFTER_MS).toISOString());
      this.rows = await this.store.list();
    } catch (error) {
      this.o.log.warn("fleet heartbeat failed; trying again at the next one", { error: (error as Error).message });
      return;
    }
    this.notify();
    try {
      this.armExpiry();
    } catch (error) {
      this.o.log.warn("fleet: could not read the other instances' leases; their runs are looked at again at the next beat", {
        error: (error as Error).message,
      });
    }
  }

  /** Reads the registry again (what `aliveIds` and `executingPeers` answer from); settles when read. Never rejects. */
  refresh(): Promise<void> {
    this.looking ??= (async () => {
      try {
        this.rows = await this.store.list();
      } catch (error) {
        this.o.log.warn("fleet: could not read the registry; reading it again shortly", { error: (error as Error).message });
      } finally {
        this.looking = undefined;
      }
    })();
    return this.looking;
  }

  private notify(): void {
    for (const listener of this.beatListeners) {
      try {
        listener();
      } catch (error) {
        this.o.log.warn("a fleet heartbeat listener failed; it runs again at the next beat", { error: (error as Error).message });
      }
    }
  }

  /**
   * When another instance's lease runs out before this instance's next beat (it has been silent for most of
   * its lease), the listeners also run just after that moment: its runs are taken over a lease after it fell
   * silent, not up to a heartbeat later.
   */
  private armExpiry(): void {
    if (!this.timer) return;
    const now = this.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (const row of this.rows) {
      const expires = Date.parse(row.heartbeat_at) + this.leaseMs;
      if (row.id !== this.id && expires > now && expires < earliest) earliest = expires;
    }
    const wait = earliest - now + 100;
    if (wait >= this.o.heartbeatSeconds * 1000) return;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = setTimeout(() => this.notify(), wait);
    this.expiryTimer.unref();
  }

  /** A clean stop: the heartbeat ends and the row goes. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.lookTimer) clearInterval(this.lookTimer);
    this.lookTimer = undefined;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    // A beat under way would write the row back.
    await this.beating;
    try {
      await this.store.delete(this.id);
    } catch {
      // The database may already be closed; the row is forgotten after a day anyway.
    }
  }

  /** The other instances alive now that execute runs (role `all` or `worker`), with the pieces each serves (as last read). */
  executingPeers(): PeerPieces[] {
    const alive = this.aliveIds();
    return this.rows
      .filter((row) => row.id !== this.id && alive.has(row.id) && row.role !== "api")
      .map((row) => ({ name: `${row.hostname} (pid ${row.pid})`, pieces: JSON.parse(row.pieces) as Array<{ id: string; version: string }> }));
  }

  async list(): Promise<FleetInstance[]> {
    const aliveSince = this.now() - this.leaseMs;
    return (await this.store.list()).map((row) => ({
      id: row.id,
      hostname: row.hostname,
      pid: row.pid,
      version: row.version,
      role: row.role,
      startedAt: row.started_at,
      lastHeartbeatAt: row.heartbeat_at,
      alive: Date.parse(row.heartbeat_at) >= aliveSince,
      self: row.id === this.id,
      pieces: JSON.parse(row.pieces) as Array<{ id: string; version: string }>,
    }));
  }
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
