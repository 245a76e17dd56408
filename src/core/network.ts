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
import { nowIso } from "../store/db";
import type { Storage } from "../store/port";
import type { ClusterChanges } from "./cluster-changes";
import type { Identity, Principal } from "./identity";

export type NetworkPolicyT = Static<typeof NetworkPolicy> & { canChange: boolean };

export interface NetworkSettingsOptions {
  storage: Storage;
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
  /** The allow-list last put in force, to apply a re-read only when it differs. */
  private applied: string[];
  /** Settles once the stored ranges are in force (until then, WEFT_ALLOW_CIDRS alone is); `weft serve` waits for it. */
  readonly loaded: Promise<void>;

  constructor(private readonly o: NetworkSettingsOptions) {
    // What the app was built with (WEFT_ALLOW_CIDRS) is in force until the stored ranges are read.
    this.applied = [...new Set(o.environmentCidrs)];
    this.loaded = this.effective().then(
      (effective) => this.putInForce(effective),
      (error) => this.o.log.warn("could not read the allowed address ranges; trying again at the next re-read", { error: String(error?.message ?? error) }),
    );
    o.changes.follow(
      "network",
      () => this.reload(),
      () => this.reload(),
    );
  }

  /** Re-reads the stored ranges and puts them in force if another instance changed them. */
  async reload(): Promise<void> {
    try {
      const effective = await this.effective();
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
  async effective(): Promise<string[]> {
    return [...new Set([...this.o.environmentCidrs, ...(await this.o.storage.networkRanges.list()).map((row) => row.cidr)])];
  }

  /** The policy in plain data, as the caller may see it (`canChange`: they are the instance owner). */
  async policy(principal: Principal): Promise<NetworkPolicyT> {
    const stored = await this.o.storage.networkRanges.list();
    return {
      alwaysRefused: {
        addresses: [...METADATA_ADDRESSES],
        names: [...METADATA_NAME_LIST],
        what: "cloud metadata services, which hand out the machine's own credentials",
      },
      refusedByDefault: REFUSED_BY_DEFAULT.map((group) => ({ ranges: [...group.ranges], what: group.what })),
      environment: { variable: "WEFT_ALLOW_CIDRS", allowedCidrs: [...this.o.environmentCidrs] },
      allowedRanges: stored.map((row) => ({ cidr: row.cidr, addedBy: row.added_by, addedAt: row.added_at })),
      effective: [...new Set([...this.o.environmentCidrs, ...stored.map((row) => row.cidr)])],
      canChange: (await this.ownerRefusal(principal)) === undefined,
    };
  }

  /**
   * Replaces the stored ranges with `cidrs` (each checked strictly; kept ones keep who added them and when),
   * puts the new allow-list in force and logs what changed and who changed it.
   */
  async replace(principal: Principal, cidrs: readonly string[]): Promise<NetworkPolicyT> {
    const refusal = await this.ownerRefusal(principal);
    if (refusal) throw new AppError("FORBIDDEN", refusal);
    const wanted = checkRanges(cidrs);
    const by = await this.describe(principal);
    const { added, removed } = await this.o.storage.atomically(async (unit) => {
      const stored = new Set((await unit.networkRanges.list()).map((row) => row.cidr));
      const added = wanted.filter((cidr) => !stored.has(cidr));
      const removed = [...stored].filter((cidr) => !wanted.includes(cidr));
      const at = nowIso();
      for (const cidr of removed) await unit.networkRanges.delete(cidr);
      for (const cidr of added) await unit.networkRanges.insert({ cidr, added_by: by, added_at: at });
      return { added, removed };
    });
    if (added.length > 0 || removed.length > 0) {
      const effective = await this.effective();
      this.putInForce(effective);
      this.o.log.info("network allow-list changed (Settings → Network)", { by, userId: principal.userId, added, removed, effective });
      // Committed above: every other instance reads the same ranges when it hears this.
      this.o.changes.announce({ what: "network" });
    }
    return this.policy(principal);
  }

  /** Why the caller may not change the policy, or undefined when they may. */
  private async ownerRefusal(principal: Principal): Promise<string | undefined> {
    // A token made from WEFT_BOOTSTRAP_TOKEN (or by `weft token create`) has no user: its holder controls the server's environment, WEFT_ALLOW_CIDRS included.
    if (principal.userId === null) return undefined;
    const user = await this.o.identity.user(principal.userId);
    if (user?.role === "owner") return undefined;
    return `Settings → Network applies to the whole instance, so only the instance owner may change it; ${user ? `${user.email} is ${user.role}` : "this credential's user no longer exists"}. Ask the owner, or the operator (WEFT_ALLOW_CIDRS)`;
  }

  /** Who made a change, as the policy and the log show it. */
  private async describe(principal: Principal): Promise<string> {
    const user = principal.userId ? await this.o.identity.user(principal.userId) : null;
    if (principal.kind === "session") return user?.email ?? "a signed-in user";
    const token = await this.o.identity.token(principal.credentialId, principal.workspaceId);
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
