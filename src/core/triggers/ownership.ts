/**
 * Who does the trigger work that must happen in one place only: each poll, each subscription, each webhook
 * renewal. On SQLite one process owns all of it (`soleOwner`, which never asks the database). Instances
 * sharing a PostgreSQL database hold a lease per piece of work (src/store/leases.ts) in their fleet id's name:
 * `claim` takes a lease that is free or has lapsed, the trigger service renews what this instance holds every
 * third of the lease, and when an instance dies its leases lapse and the others claim them. A clean stop
 * releases everything at once. Instants of schedules need no lease: the scheduler's compare-and-set on the
 * stored instant already lets one instance fire each (./scheduler.ts).
 */
import type { Logger } from "../../http/logger";
import type { LeaseRepository } from "../../store/leases";
import type { Storage } from "../../store/port";
import type { Clock } from "../../lib/clock";

export const POLL_LEASE = "poll:";
export const SUBSCRIPTION_LEASE = "subscription:";
export const RENEWAL_LEASE = "renewal:";

export interface Ownership {
  /** False for a single process: every claim is granted and nothing is stored. */
  readonly shared: boolean;
  /** How often the service renews what is held (`renew`), ms; 0 when there is nothing to renew. */
  readonly renewEveryMs: number;
  /** Takes `name` if it is free or lapsed, keeps it if already held; false while another instance holds it. */
  claim(name: string): Promise<boolean>;
  /** Held by this instance as far as it knows since the last renewal (no database call). */
  holds(name: string): boolean;
  /**
   * Asks the database whether this instance still holds `name` (just before committing what the work produced);
   * `leases`: those of the unit the answer is for (a unit awaits only its own calls).
   */
  confirm(name: string, leases?: LeaseRepository): Promise<boolean>;
  /** Who holds `name` now; null when nobody does or nothing is shared. */
  holder(name: string): Promise<string | null>;
  /** Gives `name` up so another instance may take it at once. */
  release(name: string): Promise<void>;
  /** The work `name` stood for is gone (unpublished), whoever held it; `leases`: those of the unit it is dropped in. */
  drop(name: string, leases?: LeaseRepository): Promise<void>;
  /** Names starting with `prefix` that some instance has claimed: how work published on another instance becomes known. */
  known(prefix: string): Promise<string[]>;
  /** Renews everything held; answers the names lost (taken by another instance after a lapse, or dropped). */
  renew(): Promise<string[]>;
  /** A clean stop: every lease held is released. */
  releaseAll(): Promise<void>;
}

/**
 * Claims `name` for a workflow's trigger work; a database error is logged with `failure` and counts as not
 * holding it (the caller tries again at its next turn).
 */
export async function claimOrLog(ownership: Ownership, name: string, workflowId: string, log: Logger, failure: string): Promise<boolean> {
  try {
    return await ownership.claim(name);
  } catch (error) {
    log.warn(failure, { workflowId, error: (error as Error).message });
    return false;
  }
}

/** One process: it owns every poll, subscription and renewal. */
export const soleOwner: Ownership = {
  shared: false,
  renewEveryMs: 0,
  claim: async () => true,
  holds: () => true,
  confirm: async () => true,
  holder: async () => null,
  async release() {},
  async drop() {},
  known: async () => [],
  renew: async () => [],
  async releaseAll() {},
};

export interface LeaseOwnershipOptions {
  storage: Storage;
  /** What the renewals go through: a port that slow work elsewhere does not hold up (default `storage`). */
  vital?: Storage;
  /** This instance's fleet id (src/core/fleet.ts). */
  owner: string;
  leaseMs: number;
  clock: Clock;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Leases in the shared database, for instances of a cluster. */
export class LeaseOwnership implements Ownership {
  readonly shared = true;
  readonly renewEveryMs: number;
  private readonly store: LeaseRepository;
  /** What this instance holds: name → expiry it last wrote (ms). */
  private readonly held = new Map<string, number>();

  constructor(private readonly o: LeaseOwnershipOptions) {
    this.store = o.storage.leases;
    this.renewEveryMs = Math.max(100, Math.floor(o.leaseMs / 3));
  }

  async claim(name: string): Promise<boolean> {
    const now = this.o.clock.now();
    const until = this.held.get(name);
    // Held with more than half the lease to run: nobody can have taken it, and the renewal keeps it.
    if (until !== undefined && until - now > this.o.leaseMs / 2) return true;
    const expires = now + this.o.leaseMs;
    if (await this.store.acquire(name, this.o.owner, iso(now), iso(expires))) {
      this.held.set(name, expires);
      return true;
    }
    this.held.delete(name);
    return false;
  }

  holds(name: string): boolean {
    const until = this.held.get(name);
    return until !== undefined && until > this.o.clock.now();
  }

  async confirm(name: string, leases: LeaseRepository = this.store): Promise<boolean> {
    return (await leases.holder(name, iso(this.o.clock.now()))) === this.o.owner;
  }

  holder(name: string): Promise<string | null> {
    return this.store.holder(name, iso(this.o.clock.now()));
  }

  async release(name: string): Promise<void> {
    this.held.delete(name);
    await this.store.release(name, this.o.owner, iso(this.o.clock.now()));
  }

  async drop(name: string, leases: LeaseRepository = this.store): Promise<void> {
    this.held.delete(name);
    await leases.drop(name);
  }

  async known(prefix: string): Promise<string[]> {
    return (await this.store.withPrefix(prefix)).map((row) => row.name);
  }

  async renew(): Promise<string[]> {
    if (this.held.size === 0) return [];
    const now = this.o.clock.now();
    const expires = now + this.o.leaseMs;
    const kept = new Set(await (this.o.vital ?? this.o.storage).leases.renewAll(this.o.owner, iso(now), iso(expires)));
    const lost: string[] = [];
    for (const name of [...this.held.keys()]) {
      if (kept.has(name)) this.held.set(name, expires);
      else {
        this.held.delete(name);
        lost.push(name);
      }
    }
    // Renewed but no longer wanted here (cannot happen unless a write outlived its caller): let it go.
    for (const name of kept) if (!this.held.has(name)) await this.store.release(name, this.o.owner, iso(now));
    return lost;
  }

  async releaseAll(): Promise<void> {
    for (const name of [...this.held.keys()]) await this.release(name);
  }
}
