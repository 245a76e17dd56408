/**
 * Which IP addresses outbound HTTP may connect to. Public unicast only, unless the operator
 * allow-lists a CIDR (WEFT_ALLOW_CIDRS). IPv4 hidden inside IPv6 (mapped `::ffff:a.b.c.d`,
 * compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged as the IPv4 it carries.
 * Parsing (including the odd IPv4 spellings `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`) and
 * range tables come from ipaddr.js.
 */
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export type AddressVerdict = { allowed: true; address: string } | { allowed: false; address: string; range: string };

/** Host names that reach cloud metadata services, refused whatever they resolve to. */
const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"]);

export function isMetadataName(hostname: string): boolean {
  return METADATA_NAMES.has(hostname.toLowerCase().replace(/\.$/, ""));
}

/** The IPv4 address an IPv6 address carries, if it is one of the forms that embed one. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  // IPv4-compatible ::a.b.c.d (deprecated, but a kernel may still route it); :: and ::1 are judged as IPv6.
  if (p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0 && (p[6] !== 0 || p[7] > 1)) return v4(p[6], p[7]);
  // SIIT ::ffff:0:a.b.c.d
  if (p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0xffff && p[5] === 0) return v4(p[6], p[7]);
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return v4(p[6], p[7]);
  if (p[0] === 0x2002) return v4(p[1], p[2]);
  return undefined;
}

/** Parses an address in any spelling ipaddr.js knows; undefined when it is not an IP address. */
export function parseAddress(text: string): Address | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  try {
    return ipaddr.parse(bare);
  } catch {
    return undefined;
  }
}

export class AddressPolicy {
  private readonly allowed: Array<[Address, number]>;

  /** @param allowCidrs e.g. ["127.0.0.0/8", "10.1.0.0/16"]; a bad entry throws with the entry named. */
  constructor(allowCidrs: readonly string[] = []) {
    this.allowed = allowCidrs.map((cidr) => {
      try {
        return ipaddr.parseCIDR(cidr.trim());
      } catch {
        throw new Error(`allow-list entry "${cidr}" is not a CIDR; use e.g. 127.0.0.0/8 or fd00::/8`);
      }
    });
  }

  check(text: string): AddressVerdict {
    const parsed = parseAddress(text);
    if (!parsed) return { allowed: false, address: text, range: "unparseable" };
    const address = parsed.toString();
    const inner = parsed.kind() === "ipv6" ? embeddedIPv4(parsed as ipaddr.IPv6) : undefined;
    if (this.isAllowListed(parsed) || (inner && this.isAllowListed(inner))) return { allowed: true, address };
    if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).range() === "teredo") return { allowed: false, address, range: "teredo" };
    const judged = inner ?? parsed;
    const range = judged.range();
    if (range === "unicast") return { allowed: true, address };
    return { allowed: false, address, range: inner ? `${range} (IPv4 ${inner.toString()} inside IPv6)` : range };
  }

  private isAllowListed(address: Address): boolean {
    for (const [network, bits] of this.allowed) {
      if (network.kind() === address.kind()) {
        if (address.match(network as any, bits)) return true;
      } else if (address.kind() === "ipv4" && network.kind() === "ipv6") {
        if ((address as ipaddr.IPv4).toIPv4MappedAddress().match(network as ipaddr.IPv6, bits)) return true;
      }
    }
    return false;
  }
}
