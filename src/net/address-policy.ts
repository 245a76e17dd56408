/**
 * Which IP addresses outbound HTTP may connect to. Public unicast only, unless a range is allow-listed
 * (WEFT_ALLOW_CIDRS and the ranges an admin allows in Settings → Network); cloud metadata addresses are
 * refused whatever the allow-list says. IPv4 hidden inside IPv6 (mapped `::ffff:a.b.c.d`,
 * compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged as the IPv4 it carries.
 * Parsing (including the odd IPv4 spellings `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`) and
 * range tables come from ipaddr.js.
 */
import type IpAddr from "ipaddr.js";
import { lazy } from "../lib/lazy";

/** ipaddr.js, loaded by the first address checked (its module builds its parsers and range tables when evaluated). */
const ip = lazy(() => require("ipaddr.js") as typeof IpAddr);

type Address = IpAddr.IPv4 | IpAddr.IPv6;

export type AddressVerdict = { allowed: true; address: string } | { allowed: false; address: string; range: string };

/** Host names that reach cloud metadata services, refused whatever they resolve to. */
const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"]);

export function isMetadataName(hostname: string): boolean {
  return METADATA_NAMES.has(hostname.toLowerCase().replace(/\.$/, ""));
}

/**
 * Addresses of cloud metadata services (they hand out the machine's credentials): refused even inside an
 * allowed range. AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle (169.254.169.254); AWS over IPv6
 * (fd00:ec2::254); ECS task and EKS pod credentials (169.254.170.2, 169.254.170.23, fd00:ec2::23); Alibaba (100.100.100.200).
 */
export const METADATA_ADDRESSES = ["169.254.169.254", "169.254.170.2", "169.254.170.23", "100.100.100.200", "fd00:ec2::254", "fd00:ec2::23"] as const;
const METADATA_SET = new Set<string>(METADATA_ADDRESSES);
export const METADATA_NAME_LIST: readonly string[] = [...METADATA_NAMES];

/** The range name a verdict gives a metadata address (./guarded-fetch.ts words its refusal differently). */
export const METADATA_RANGE = "cloud metadata";

/** What is refused unless allow-listed, in plain words (shown by Settings → Network). */
export const REFUSED_BY_DEFAULT: ReadonlyArray<{ ranges: string[]; what: string }> = [
  { ranges: ["127.0.0.0/8", "::1/128"], what: "loopback: the Weft machine itself" },
  { ranges: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"], what: "private networks (your LAN, containers, VPNs)" },
  { ranges: ["169.254.0.0/16", "fe80::/10"], what: "link-local addresses" },
  { ranges: ["100.64.0.0/10"], what: "carrier-grade NAT (also used by Tailscale)" },
  { ranges: ["0.0.0.0/8", "::/128"], what: "unspecified addresses" },
  { ranges: ["224.0.0.0/4", "ff00::/8", "255.255.255.255/32"], what: "multicast and broadcast" },
  { ranges: ["192.0.2.0/24", "198.18.0.0/15", "240.0.0.0/4", "2001:db8::/32"], what: "reserved, documentation and benchmarking ranges" },
];

/** The IPv4 address an IPv6 address carries, if it is one of the forms that embed one. */
function embeddedIPv4(address: IpAddr.IPv6): IpAddr.IPv4 | undefined {
  const p = address.parts;
  const v4 = (high: number, low: number) => new (ip().IPv4)([high >> 8, high & 0xff, low >> 8, low & 0xff]);
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
    return ip().parse(bare);
  } catch {
    return undefined;
  }
}

const isMetadataAddress = (address: Address) => METADATA_SET.has(address.toString());

/**
 * An allowed range as an admin typed it, checked strictly: the canonical CIDR, or what is wrong with it and
 * an example. IPv4 in four decimal parts (so `010.0.0.0/8` is not silently octal), no bits past the prefix.
 */
export function checkAllowedRange(text: string): { cidr: string } | { error: string } {
  const example = "e.g. 192.168.1.0/24 or fd00::/8";
  const match = /^([^/\s]+)\/(0|[1-9]\d{0,2})$/.exec(text);
  if (!match) {
    if (parseAddress(text)) return { error: `"${text}" has no prefix length: write ${text}/32 for this one address (IPv6: /128), or a range, ${example}` };
    return { error: `"${text}" is not a CIDR range; write an address, a slash and a prefix length, ${example}` };
  }
  const [, host, bitsText] = match;
  const bits = Number(bitsText);
  const v4 = ip().IPv4.isValidFourPartDecimal(host);
  if (!v4 && !(host.includes(":") && ip().IPv6.isValid(host))) {
    return { error: `"${text}" is not a CIDR range: write IPv4 as four decimal numbers without leading zeros, or IPv6, ${example}` };
  }
  const max = v4 ? 32 : 128;
  if (bits > max) return { error: `"${text}" has a prefix longer than an ${v4 ? "IPv4" : "IPv6"} address (at most /${max})` };
  const network = v4 ? ip().IPv4.networkAddressFromCIDR(text) : ip().IPv6.networkAddressFromCIDR(text);
  const cidr = `${network.toString()}/${bits}`;
  if (network.toString() !== ip().parse(host).toString()) return { error: `"${text}" has address bits set past its prefix; the range is ${cidr}` };
  if (bits === 0) return { error: `"${text}" is every address, which would turn the guard off; allow only the ranges your workflows need, ${example}` };
  if (bits === max && isMetadataAddress(network)) {
    return { error: `"${text}" is a cloud metadata address, which stays refused whatever is allowed (it hands out the machine's credentials)` };
  }
  return { cidr };
}

export class AddressPolicy {
  private allowed: Array<[Address, number]> = [];
  private cidrs: string[] = [];

  /** @param allowCidrs e.g. ["127.0.0.0/8", "10.1.0.0/16"]; a bad entry throws with the entry named. */
  constructor(allowCidrs: readonly string[] = []) {
    this.setAllowed(allowCidrs);
  }

  /** The allow-list in force. */
  get allowedCidrs(): readonly string[] {
    return this.cidrs;
  }

  /** Replaces the allow-list; the next check uses it (Settings → Network changes it while the server runs). */
  setAllowed(allowCidrs: readonly string[]): void {
    this.allowed = allowCidrs.map((cidr) => {
      try {
        return ip().parseCIDR(cidr.trim());
      } catch {
        throw new Error(`allow-list entry "${cidr}" is not a CIDR; use e.g. 127.0.0.0/8 or fd00::/8`);
      }
    });
    this.cidrs = [...allowCidrs];
  }

  check(text: string): AddressVerdict {
    const parsed = parseAddress(text);
    if (!parsed) return { allowed: false, address: text, range: "unparseable" };
    const address = parsed.toString();
    const inner = parsed.kind() === "ipv6" ? embeddedIPv4(parsed as IpAddr.IPv6) : undefined;
    if (isMetadataAddress(parsed) || (inner && isMetadataAddress(inner))) return { allowed: false, address, range: METADATA_RANGE };
    if (this.isAllowListed(parsed) || (inner && this.isAllowListed(inner))) return { allowed: true, address };
    if (parsed.kind() === "ipv6" && (parsed as IpAddr.IPv6).range() === "teredo") return { allowed: false, address, range: "teredo" };
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
        if ((address as IpAddr.IPv4).toIPv4MappedAddress().match(network as IpAddr.IPv6, bits)) return true;
      }
    }
    return false;
  }
}
