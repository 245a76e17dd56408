/**
 * Settings → Network: the private ranges steps may reach, instance-wide. The allow-list in force is
 * WEFT_ALLOW_CIDRS plus the ranges an admin stored here; a change is put in force at once everywhere steps
 * run (the `apply` port: this thread's guarded fetch, the worker threads, the piece host processes) and
 * logged with who made it. Only the instance owner changes it; any workspace admin may read it.
 *
 * In a cluster (instances sharing a PostgreSQL database) a change made on one instance is announced on the
 * bus (`weft_settings` {what: "network"}, after its commit); every instance re-reads the stored ranges and
 * puts them in force, and also re-reads them every `recheckMs`, should a notification be lost while the bus
 * reconnects. Alone (SQLite) there is no bus and no timer.
 */
import type { Static } from "@sinclair/typebox";
import { AppError } from "../http/errors";
import type { Logger } from "../http/logger";
import { checkAllowedRange, METADATA_ADDRESSES, METADATA_NAME_LIST, REFUSED_BY_DEFAULT } from "../net/address-policy";
import type { NetworkPolicy } from "../schema/network";
import { type Bus, openBus } from "../store/bus";
import { atomically, type Db, nowIso } from "../store/db";
import { NetworkRangeStore } from "../store/network";
import type { Identity, Principal } from "./identity";

export type NetworkPolicyT = Static<typeof NetworkPolicy> & { canChange: boolean };

export interface NetworkSettingsOptions {
  db: Db;
  log: Logger;
  identity: Identity;
  /** WEFT_ALLOW_CIDRS, as config.ts parsed it. */
  environmentCidrs: readonly string[];
  /** Puts an allow-list in force everywhere steps run; called at start and after every change. */
  apply: (cidrs: readonly string[]) => void;
  /** In a cluster, how often the stored ranges are re-read besides the bus's notifications; default 30 s. */
  recheckMs?: number;
}

/** The bus channel on which a committed change of instance-wide settings is announced. */
const SETTINGS_CHANNEL = "weft_settings";

export class NetworkSettings {
  private readonly store: NetworkRangeStore;
  /** The allow-list last put in force, to apply a re-read only when it differs. */
  private applied: string[] = [];
  private bus: Bus | null = null;
  private recheck: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly o: NetworkSettingsOptions) {
    this.store = new NetworkRangeStore(o.db);
    this.putInForce(this.effective());
  }

  /**
   * In a cluster: follows the changes other instances make (bus and timer). Alone: nothing to do. Resolves
   * once it listens; a change committed before then is found by the re-read that follows (`weft serve` does
   * not wait for it: the allow-list read when the app was built is in force meanwhile).
   */
  async start(): Promise<void> {
    if (this.bus) return;
    const bus = openBus(this.o.db, (error) => this.o.log.warn("cluster bus (Settings → Network)", { error: String((error as Error)?.message ?? error) }));
    this.bus = bus;
    if (!bus) return;
    this.recheck = setInterval(() => this.reload(), this.o.recheckMs ?? 30_000);
    this.recheck.unref?.();
    // Whatever ends after stop() (which closes the bus) is not this instance's concern any more.
    const running = () => this.bus === bus;
    await bus
      .subscribe(SETTINGS_CHANNEL, (message) => {
        if ((message as { what?: unknown } | null)?.what === "network") this.reload();
      })
      .then(() => {
        if (running()) this.reload();
      })
      .catch((error) => {
        if (!running()) return;
        this.o.log.error("cannot listen on the cluster bus; changes made on other instances apply at the next re-read", {
          error: String((error as Error)?.message ?? error),
          recheckSeconds: (this.o.recheckMs ?? 30_000) / 1000,
        });
      });
  }

  async stop(): Promise<void> {
    if (this.recheck) clearInterval(this.recheck);
    this.recheck = undefined;
    const bus = this.bus;
    this.bus = null;
    await bus?.close();
  }

  /** Re-reads the stored ranges and puts them in force if another instance changed them. */
  reload(): void {
    try {
      const effective = this.effective();
      if (sameList(effective, this.applied)) return;
      this.putInForce(effective);
      this.o.log.info("network allow-list changed on another instance (Settings → Network)", { effective });
    } catch (error) {
      this.o.log.warn("could not re-read the allowed address ranges; trying again at the next re-read", { error: String((error as Error)?.message ?? error) });
    }
  }

  private putInForce(effective: string[]): void {
    this.o.apply(effective);
    this.applied = effective;
  }

  /** WEFT_ALLOW_CIDRS and the stored ranges together, each once. */
  effective(): string[] {
    return [...new Set([...this.o.environmentCidrs, ...this.store.list().map((row) => row.cidr)])];
  }

  /** The policy in plain data, as the caller may see it (`canChange`: they are the instance owner). */
  policy(principal: Principal): NetworkPolicyT {
    return {
      alwaysRefused: {
        addresses: [...METADATA_ADDRESSES],
        names: [...METADATA_NAME_LIST],
        what: "cloud metadata services, which hand out the machine's own credentials",
      },
      refusedByDefault: REFUSED_BY_DEFAULT.map((group) => ({ ranges: [...group.ranges], what: group.what })),
      environment: { variable: "WEFT_ALLOW_CIDRS", allowedCidrs: [...this.o.environmentCidrs] },
      allowedRanges: this.store.list().map((row) => ({ cidr: row.cidr, addedBy: row.added_by, addedAt: row.added_at })),
      effective: this.effective(),
      canChange: this.ownerRefusal(principal) === undefined,
    };
  }

  /**
   * Replaces the stored ranges with `cidrs` (each checked strictly; kept ones keep who added them and when),
   * puts the new allow-list in force and logs what changed and who changed it.
   */
  replace(principal: Principal, cidrs: readonly string[]): NetworkPolicyT {
    const refusal = this.ownerRefusal(principal);
    if (refusal) throw new AppError("FORBIDDEN", refusal);
    const wanted = checkRanges(cidrs);
    const by = this.describe(principal);
    const { added, removed } = atomically(this.o.db, () => {
      const stored = new Set(this.store.list().map((row) => row.cidr));
      const added = wanted.filter((cidr) => !stored.has(cidr));
      const removed = [...stored].filter((cidr) => !wanted.includes(cidr));
      const at = nowIso();
      for (const cidr of removed) this.store.delete(cidr);
      for (const cidr of added) this.store.insert({ cidr, added_by: by, added_at: at });
      return { added, removed };
    });
    if (added.length > 0 || removed.length > 0) {
      const effective = this.effective();
      this.putInForce(effective);
      this.o.log.info("network allow-list changed (Settings → Network)", { by, userId: principal.userId, added, removed, effective });
      // Committed above: every other instance reads the same ranges when it hears this.
      this.bus?.publish(SETTINGS_CHANNEL, { what: "network" });
    }
    return this.policy(principal);
  }

  /** Why the caller may not change the policy, or undefined when they may. */
  private ownerRefusal(principal: Principal): string | undefined {
    // A token made from WEFT_BOOTSTRAP_TOKEN (or by `weft token create`) has no user: its holder controls the server's environment, WEFT_ALLOW_CIDRS included.
    if (principal.userId === null) return undefined;
    const user = this.o.identity.store.user(principal.userId);
    if (user?.role === "owner") return undefined;
    return `Settings → Network applies to the whole instance, so only the instance owner may change it; ${user ? `${user.email} is ${user.role}` : "this credential's user no longer exists"}. Ask the owner, or the operator (WEFT_ALLOW_CIDRS)`;
  }

  /** Who made a change, as the policy and the log show it. */
  private describe(principal: Principal): string {
    const user = principal.userId ? this.o.identity.store.user(principal.userId) : null;
    if (principal.kind === "session") return user?.email ?? "a signed-in user";
    const token = this.o.identity.store.token(principal.credentialId, principal.workspaceId);
    const name = token ? `API token "${token.name}" (${token.prefix}…)` : "an API token";
    return user ? `${user.email} with ${name}` : name;
  }
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((item, i) => item === b[i]);

/** The ranges as stored: canonical, each once; every bad entry named in one 400. */
function checkRanges(cidrs: readonly string[]): string[] {
  const problems: Array<{ path: string; value: string; message: string }> = [];
  const wanted: string[] = [];
  cidrs.forEach((text, i) => {
    const checked = checkAllowedRange(text.trim());
    if ("error" in checked) problems.push({ path: `/allowedCidrs/${i}`, value: text, message: `allowedCidrs[${i}]: ${checked.error}` });
    else if (!wanted.includes(checked.cidr)) wanted.push(checked.cidr);
  });
  if (problems.length > 0) {
    throw new AppError("VALIDATION_FAILED", problems.map((p) => p.message).join("; "), { problems });
  }
  return wanted;
}
