/**
 * The fleet: a `weft serve` process registers itself in the database when it starts — host, pid, version,
 * role and the pieces (id and version) it can run — and renews its heartbeat every `heartbeatSeconds`. An
 * instance whose heartbeat is older than three intervals is shown as not alive (it stopped without saying so:
 * a SIGKILL, a power cut); one silent for a day is forgotten. A clean stop removes its own row. Instances on
 * one PostgreSQL database see each other; on SQLite there is one. GET /api/fleet lists them.
 */
import type { Logger } from "../http/logger";
import { newId } from "../lib/ids";
import type { PieceRegistry } from "../pieces-runtime/registry";
import type { Db } from "../store/db";
import { InstanceStore } from "../store/instances";
import { hostname } from "node:os";

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
  db: Db;
  log: Logger;
  pieces: PieceRegistry;
  version: string;
  heartbeatSeconds: number;
  now?: () => number;
}

export class Fleet {
  readonly id = newId();
  private readonly store: InstanceStore;
  private timer: ReturnType<typeof setInterval> | undefined;
  private startedAt = "";

  constructor(private readonly o: FleetOptions) {
    this.store = new InstanceStore(o.db);
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** The pieces this process can run, every installed version. */
  private pieces(): Array<{ id: string; version: string }> {
    return this.o.pieces
      .ids()
      .flatMap((id) => this.o.pieces.versionsOf(id).map((piece) => ({ id, version: piece.version })))
      .sort((a, b) => (a.id === b.id ? a.version.localeCompare(b.version) : a.id.localeCompare(b.id)));
  }

  /** Registers this process and starts its heartbeat (`weft serve`). */
  start(): void {
    if (this.timer) return;
    this.startedAt = new Date(this.now()).toISOString();
    this.register();
    this.timer = setInterval(() => this.beat(), this.o.heartbeatSeconds * 1000);
    this.timer.unref();
  }

  private register(): void {
    const at = new Date(this.now()).toISOString();
    this.store.put({
      id: this.id,
      hostname: hostname(),
      pid: process.pid,
      version: this.o.version,
      role: "all",
      started_at: this.startedAt,
      heartbeat_at: at,
      pieces: JSON.stringify(this.pieces()),
    });
  }

  /** Renews the heartbeat (and the piece list, which installs change); registers again if the row was pruned. */
  beat(): void {
    try {
      this.register();
      this.store.deleteSilentSince(new Date(this.now() - FORGET_AFTER_MS).toISOString());
    } catch (error) {
      this.o.log.warn("fleet heartbeat failed; trying again at the next one", { error: (error as Error).message });
    }
  }

  /** A clean stop: the heartbeat ends and the row goes. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    try {
      this.store.delete(this.id);
    } catch {
      // The database may already be closed; the row is forgotten after a day anyway.
    }
  }

  list(): FleetInstance[] {
    const aliveSince = this.now() - 3 * this.o.heartbeatSeconds * 1000;
    return this.store.list().map((row) => ({
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
