/**
 * Settings → Network: the private ranges steps may reach, instance-wide. The allow-list in force is
 * WEFT_ALLOW_CIDRS plus the ranges an admin stored here; a change is put in force at once everywhere steps
 * run (the `apply` port: this thread's guarded fetch, the worker threads, the piece host processes) and
 * logged with who made it. Only the instance owner changes it; any workspace admin may read it.
 *
 * In a cluster (instances sharing a PostgreSQL database) a change made on one instance is announced after its
 * commit (`network`, core/cluster-changes.ts); every instance re-reads the stored ranges and puts them in force
 * when they differ from what it applied, and re-reads them on the cluster's timer too, should a notification
 * be lost while the bus reconnects. Alone (SQLite) there is no bus and no timer.
 */
import type { Static } from "@sinclair/typebox";
import { AppError } from "../http/errors";
import type { Logger } from "../http/logger";
import { checkAllowedRange, METADATA_ADDRESSES, METADATA_NAME_LIST, REFUSED_BY_DEFAULT } from "../net/address-policy";
import type { NetworkPolicy } from "../schema/network";
import { atomically, type Db, nowIso } from "../store/db";
import { NetworkRangeStore } from "../store/network";
import type { ClusterChanges } from "./cluster-changes";
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
  /** Where a change is announced to the other instances of a cluster, and heard from them. */
  changes: ClusterChanges;
}

export class NetworkSettings {
  private readonly store: NetworkRangeStore;
  /** The allow-list last put in force, to apply a re-read only when it differs. */
  private applied: string[] = [];

  constructor(private readonly o: NetworkSettingsOptions) {
    this.store = new NetworkRangeStore(o.db);
    this.putInForce(this.effective());
    o.changes.follow(
      "network",
      () => this.reload(),
      () => this.reload(),
    );
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
      this.o.changes.announce({ what: "network" });
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
