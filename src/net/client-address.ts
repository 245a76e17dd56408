/**
 * Who is on the other end of a request: the client's address and whether it came over HTTPS. The socket's
 * peer is the client unless it is one of WEFT_TRUSTED_PROXIES (docs/configuration.md): only then are
 * X-Forwarded-For and X-Forwarded-Proto believed, since any client may send them. Resolved once per request
 * (`remember`, in the app's first hook) and read by the audit log, the rate limits, the login guard and the
 * sessions list (`clientOf`).
 *   const clients = new ClientAddresses(["10.0.0.5", "192.168.0.0/16"]);
 *   clients.remember(request, server.requestIP(request)?.address);
 *   clientOf(request) // { address: "203.0.113.9", https: true } when 10.0.0.5 forwarded it
 */
import { AddressRanges } from "./address-ranges";

export interface Client {
  /** The client's address; null when the request did not come over a socket (in-process calls). */
  address: string | null;
  /** The request reached Weft over HTTPS: directly, or at a trusted proxy that said so in X-Forwarded-Proto. */
  https: boolean;
}

/** A bare address is a range of one: `10.0.0.5` reads as `10.0.0.5/32`, `::1` as `::1/128`. */
export function asCidr(entry: string): string {
  const trimmed = entry.trim();
  if (trimmed.includes("/")) return trimmed;
  return `${trimmed}/${trimmed.includes(":") ? 128 : 32}`;
}

/** Drops the port a proxy may append (`203.0.113.9:5123`, `[2001:db8::1]:443`) and IPv6 brackets. */
function bareAddress(entry: string): string {
  const value = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) return bracketed[1]!;
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(value);
  return v4WithPort ? v4WithPort[1]! : value;
}

const remembered = new WeakMap<Request, Client>();

export class ClientAddresses {
  private readonly proxies: AddressRanges;

  /** `trusted`: addresses or CIDR ranges of the reverse proxies in front of Weft; throws naming a bad entry. */
  constructor(trusted: readonly string[]) {
    this.proxies = new AddressRanges(trusted.map(asCidr));
  }

  /** Whether any proxy is trusted (without one, forwarding headers are never read). */
  get trustsProxies(): boolean {
    return this.proxies.cidrs.length > 0;
  }

  /**
   * The client of a request whose socket peer is `peer`. Behind trusted proxies the client is the right-most
   * X-Forwarded-For entry that is not itself a trusted proxy (entries left of it could be made up by the client).
   */
  resolve(request: Request, peer: string | null | undefined): Client {
    const direct: Client = { address: peer ?? null, https: request.url.startsWith("https:") };
    if (!peer || !this.proxies.includes(peer)) return direct;
    let address = peer;
    const forwardedFor = request.headers.get("x-forwarded-for");
    if (forwardedFor) {
      const hops = forwardedFor.split(",").map(bareAddress).filter(Boolean);
      for (let i = hops.length - 1; i >= 0; i--) {
        address = hops[i]!;
        if (!this.proxies.includes(address)) break;
      }
    }
    const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    return { address, https: proto ? proto === "https" : direct.https };
  }

  /** Resolves the request's client once; `clientOf` answers it for the rest of the request. */
  remember(request: Request, peer: string | null | undefined): Client {
    const client = this.resolve(request, peer);
    remembered.set(request, client);
    return client;
  }
}

/** The client `remember` resolved for this request; without it (a request that skipped the app's hooks), the socket's peer. */
export function clientOf(request: Request, peer?: string | null): Client {
  return remembered.get(request) ?? { address: peer ?? null, https: new URL(request.url).protocol === "https:" };
}
