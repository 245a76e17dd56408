/**
 * A list of CIDR ranges that a caller's address is looked up in: who may read /metrics without a token
 * (WEFT_METRICS_ALLOW_CIDRS). An IPv4 caller that a dual-stack socket reports as IPv6 (`::ffff:127.0.0.1`)
 * is judged as the IPv4 address it is. Only the socket's address counts, never a forwarding header.
 *   new AddressRanges(["127.0.0.0/8", "::1/128"]).includes("127.0.0.1") // true
 */
import type IpAddr from "ipaddr.js";
import { lazy } from "../lib/lazy";

/** ipaddr.js, loaded by the first range parsed (as in ./address-policy.ts). */
const ip = lazy(() => require("ipaddr.js") as typeof IpAddr);

type Range = [IpAddr.IPv4 | IpAddr.IPv6, number];

/** One range as an operator wrote it (`10.0.0.0/8`, `::1/128`); throws naming the entry when it is not one. */
function parseRange(cidr: string): Range {
  try {
    return ip().parseCIDR(cidr.trim());
  } catch {
    throw new Error(`"${cidr}" is not a CIDR range; write an address, a slash and a prefix length, e.g. 127.0.0.1/32, 10.0.0.0/8 or ::1/128`);
  }
}

export class AddressRanges {
  private readonly ranges: Range[];

  /** Throws, naming the entry, when one is not a CIDR range. */
  constructor(readonly cidrs: readonly string[]) {
    this.ranges = cidrs.map(parseRange);
  }

  /** True when `address` (as the socket reports it) is in one of the ranges; false for none or an unparseable one. */
  includes(address: string | undefined): boolean {
    if (!address || this.ranges.length === 0) return false;
    let parsed: IpAddr.IPv4 | IpAddr.IPv6;
    try {
      parsed = ip().process(address);
    } catch {
      return false;
    }
    for (const [network, bits] of this.ranges) {
      if (parsed.kind() === network.kind() && parsed.match(network as never, bits)) return true;
    }
    return false;
  }
}
