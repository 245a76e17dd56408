/**
 * The SSRF guard: a fetch for pieces that refuses loopback, private, link-local, CGNAT, metadata,
 * unspecified and multicast addresses (./address-policy.ts) — checked on the address actually
 * connected to and on every redirect hop.
 *
 * How: the host name is resolved here, every resolved address is checked, and the request goes to
 * the checked IP itself with the original name in the Host header and as the TLS server name (SNI
 * and certificate check). So DNS rebinding between check and connect cannot happen, and a name
 * resolving to several addresses is refused if any of them is refused. (Bun's fetch ignores an
 * `agent`, so a filtering agent cannot do this.) Redirects are followed by hand, at most 5.
 *
 *   const fetch = createGuardedFetch({ allowCidrs: config.allowedCidrs });
 *   await fetch("http://169.254.169.254/latest/meta-data/"); // throws SsrfBlockedError
 *   const live = createGuardedFetch({ policy }); // follows policy.setAllowed(...) from then on
 */
import { lookup } from "node:dns/promises";
import type { GuardedFetch } from "../pieces-sdk/types";
import { AddressPolicy, isMetadataName, METADATA_RANGE, parseAddress } from "./address-policy";

export const MAX_REDIRECTS = 5;

/** A refused destination. A TypeError, as fetch's own network failures are. */
export class SsrfBlockedError extends TypeError {
  readonly code = "SSRF_BLOCKED";
}

export interface GuardedFetchOptions {
  /** CIDRs that may be reached although not public (config.allowedCidrs, WEFT_ALLOW_CIDRS). */
  allowCidrs?: readonly string[];
  /** A policy shared with others, whose allow-list may change while this fetch lives (Settings → Network); wins over allowCidrs. */
  policy?: AddressPolicy;
  /** Resolves a host name to its addresses; the system resolver by default (tests replace it). */
  resolve?: (hostname: string) => Promise<string[]>;
  /** The fetch that makes the pinned connection; the global one by default. */
  fetch?: typeof fetch;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Request headers that must not follow a redirect to another origin (as the fetch standard does for Authorization). */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

async function systemResolve(hostname: string): Promise<string[]> {
  const records = await lookup(hostname, { all: true, verbatim: true });
  return records.map((record) => record.address);
}

/**
 * The same address policy for connections that are not HTTP (MQTT, IMAP, SMTP, SQL drivers): the
 * host name is resolved and every address checked; the caller connects to the returned address
 * (and passes the name as TLS server name), so DNS rebinding cannot slip in between.
 *   const ip = await guard("broker.lan"); // throws SsrfBlockedError when refused
 */
export type HostGuard = (host: string) => Promise<string>;

const ALLOW_HINT = "an admin can allow a range in Settings → Network (or with WEFT_ALLOW_CIDRS, e.g. WEFT_ALLOW_CIDRS=10.0.0.0/8)";

/** The refusal of an address the policy blocks (`host` when a name resolved to it). Shared with ./socket-guard.ts. */
export function blockedAddressError(address: string, range: string, host?: string): SsrfBlockedError {
  const via = host ? ` (${host} resolves to it)` : "";
  if (range === METADATA_RANGE) {
    return new SsrfBlockedError(`refused to connect to ${address}${via}, a cloud metadata address: pieces may never reach it, whatever range is allowed`);
  }
  return new SsrfBlockedError(
    `refused to connect to ${address}${via}, a ${range} address: pieces may not reach loopback, private, link-local, CGNAT, metadata or multicast addresses; ${ALLOW_HINT}`,
  );
}

/** The refusal of a cloud metadata service's name, whatever it resolves to. */
export function metadataNameError(host: string): SsrfBlockedError {
  return new SsrfBlockedError(`refused to connect to ${host}: it names a cloud metadata service, which pieces may never reach`);
}

export function createHostGuard(options: Pick<GuardedFetchOptions, "allowCidrs" | "policy" | "resolve"> = {}): HostGuard {
  const policy = options.policy ?? new AddressPolicy(options.allowCidrs ?? []);
  const resolve = options.resolve ?? systemResolve;
  return async function resolveHost(host: string): Promise<string> {
    const literal = parseAddress(host);
    if (!literal && isMetadataName(host)) {
      throw metadataNameError(host);
    }
    let addresses: string[];
    if (literal) addresses = [host];
    // RFC 6761: localhost names are loopback whatever a resolver says.
    else if (/(^|\.)localhost\.?$/i.test(host)) addresses = ["127.0.0.1"];
    else {
      try {
        addresses = await resolve(host);
      } catch (error) {
        throw new TypeError(`could not resolve ${host}: ${(error as Error).message}`);
      }
      if (!addresses.length) throw new TypeError(`could not resolve ${host}: no addresses`);
    }
    for (const address of addresses) {
      const verdict = policy.check(address);
      if (!verdict.allowed) {
        throw blockedAddressError(verdict.address, verdict.range, literal ? undefined : host);
      }
    }
    const first = parseAddress(addresses[0])!;
    return first.toString();
  };
}

export function createGuardedFetch(options: GuardedFetchOptions = {}): GuardedFetch {
  const resolveHost = createHostGuard(options);
  const connect = options.fetch ?? fetch;

  /** The address to connect to for `url`, or a refusal. */
  async function destination(url: URL): Promise<string> {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new SsrfBlockedError(`refused ${url.protocol} URL ${url.href}: pieces may only make http: and https: requests`);
    }
    return resolveHost(url.hostname);
  }

  /** One request to an address that passed the policy, carrying the original host name. */
  async function pinned(url: URL, init: RequestInit & Record<string, unknown>): Promise<Response> {
    const address = await destination(url);
    const target = new URL(url.href);
    const ip = parseAddress(address)!;
    target.hostname = ip.kind() === "ipv6" ? `[${ip.toString()}]` : ip.toString();
    const headers = new Headers(init.headers as HeadersInit | undefined);
    headers.set("host", url.host);
    const request: Record<string, unknown> = { ...init, headers, redirect: "manual" };
    if (url.protocol === "https:" && !parseAddress(url.hostname)) {
      // SNI and the certificate check use the name, not the IP we connect to.
      request.tls = { ...(init.tls as object | undefined), serverName: url.hostname };
    }
    return connect(target, request as RequestInit);
  }

  const guardedFetch = async function guardedFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    let url: URL;
    let request: RequestInit & Record<string, unknown> = { ...init };
    if (input instanceof Request) {
      url = new URL(input.url);
      request = {
        method: input.method,
        headers: input.headers,
        body: input.body ? await input.arrayBuffer() : undefined,
        signal: input.signal,
        redirect: input.redirect,
        ...init,
      };
    } else {
      url = new URL(String(input));
    }
    // Options that would bypass the pinned connection.
    delete request.unix;
    delete request.proxy;
    delete request.s3;
    const mode = request.redirect ?? "follow";
    let method = (request.method ?? "GET").toUpperCase();
    let body = request.body;
    const headers = new Headers(request.headers);
    for (let hop = 0; ; hop++) {
      const response = await pinned(url, { ...request, method, body, headers });
      const location = response.headers.get("location");
      if (!REDIRECT_STATUSES.has(response.status) || !location || mode === "manual") return present(response, url, hop > 0);
      await response.body?.cancel().catch(() => {});
      if (mode === "error") throw new TypeError(`${url.href} redirected to ${location} and the request asked for redirect: "error"`);
      if (hop >= MAX_REDIRECTS) throw new SsrfBlockedError(`${url.href} redirected more than ${MAX_REDIRECTS} times; refused to follow further`);
      const next = new URL(location, url);
      const becomesGet =
        ((response.status === 301 || response.status === 302) && method === "POST") || (response.status === 303 && method !== "GET" && method !== "HEAD");
      if (becomesGet) {
        method = "GET";
        body = undefined;
        for (const name of ["content-type", "content-length", "content-encoding", "content-language", "content-location"]) headers.delete(name);
      }
      if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
      url = next;
    }
  };
  return Object.assign(guardedFetch, { resolveHost });
}

/** `inner`'s host guard carried over to a wrapper around it (wrappers add a signal, or defer the choice of fetch). */
export function wrapGuardedFetch(wrapper: (url: string | URL, init?: RequestInit) => Promise<Response>, inner: () => GuardedFetch): GuardedFetch {
  return Object.assign(wrapper, { resolveHost: (host: string) => (inner().resolveHost ?? createHostGuard())(host) });
}

/** The response as the caller expects it: its url is the name-based URL, not the pinned IP. */
function present(response: Response, url: URL, redirected: boolean): Response {
  Object.defineProperty(response, "url", { value: url.href });
  if (redirected) Object.defineProperty(response, "redirected", { value: true });
  return response;
}
