/**
 * The address policy for a whole process that runs third-party code (a piece host, see
 * src/pieces-runtime/activepieces/): every TCP connection it opens — node:net, node:tls, node:http,
 * node:https and the drivers built on them, which in Bun all pass through `net.Socket.prototype.connect` —
 * and every global fetch obey the same rules as the pieces' guarded fetch (./guarded-fetch.ts).
 *
 * How: an IP literal is checked before the connect; a host name gets a `lookup` that resolves it, checks
 * every address and hands the checked ones to the socket (so the connection goes to what was checked);
 * Unix sockets are refused. `globalThis.fetch` becomes the guarded fetch and `Bun.connect` is refused.
 *
 *   const guard = guardProcessSockets({ allowCidrs: ["10.0.0.0/8"] }); // once, before loading the third-party code
 *   guard.setAllowed(["192.168.1.0/24"]); // later: new connections follow it; open ones to 10.0.0.0/8 are closed
 */
import dns from "node:dns";
import net from "node:net";
import { AddressPolicy, isMetadataName, parseAddress } from "./address-policy";
import { blockedAddressError, createGuardedFetch, metadataNameError, SsrfBlockedError } from "./guarded-fetch";

type LookupCallback = (error: Error | null, address?: string | Array<{ address: string; family: number }>, family?: number) => void;

export interface ProcessGuard {
  /**
   * A new allow-list: new connections obey it, and open ones (kept-alive sockets of node:http included)
   * to an address it no longer allows are closed, so none outlives the change.
   */
  setAllowed(allowCidrs: readonly string[]): void;
}

/** Installs the guard in this process. Idempotent. */
export function guardProcessSockets(options: { allowCidrs?: readonly string[] } = {}): ProcessGuard {
  const marker = Symbol.for("weft.socketGuard");
  const global = globalThis as Record<symbol, unknown>;
  if (global[marker]) return global[marker] as ProcessGuard;
  const policy = new AddressPolicy(options.allowCidrs ?? []);
  /** Sockets this process opened and has not closed. */
  const open = new Set<net.Socket>();
  const guard: ProcessGuard = {
    setAllowed(allowCidrs) {
      policy.setAllowed(allowCidrs);
      for (const socket of open) {
        const verdict = socket.remoteAddress ? policy.check(socket.remoteAddress) : undefined;
        if (verdict && !verdict.allowed) socket.destroy(blockedAddressError(verdict.address, verdict.range));
      }
    },
  };
  global[marker] = guard;
  const systemLookup = dns.lookup.bind(dns);

  /** A `lookup` for sockets: the system resolver, then the policy on every address. */
  function guardedLookup(host: string, lookupOptions: unknown, callback?: LookupCallback) {
    const done = (typeof lookupOptions === "function" ? lookupOptions : callback) as LookupCallback;
    const wantsAll = typeof lookupOptions === "object" && lookupOptions !== null && (lookupOptions as { all?: boolean }).all === true;
    if (isMetadataName(host)) {
      done(metadataNameError(host));
      return;
    }
    systemLookup(host, { all: true, verbatim: true }, (error, records) => {
      if (error) return done(error);
      const list = records as Array<{ address: string; family: number }>;
      for (const record of list) {
        const verdict = policy.check(record.address);
        if (!verdict.allowed) return done(blockedAddressError(verdict.address, verdict.range, host));
      }
      if (wantsAll) done(null, list);
      else done(null, list[0]?.address, list[0]?.family);
    });
  }

  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const options = connectOptions(args);
    if (typeof options.path === "string" && options.path !== "")
      return failLater(this, new SsrfBlockedError("refused to connect to a Unix socket: pieces may only reach network addresses"));
    const host = typeof options.host === "string" && options.host !== "" ? options.host : "localhost";
    const literal = parseAddress(host);
    if (literal) {
      const verdict = policy.check(host);
      if (!verdict.allowed) return failLater(this, blockedAddressError(verdict.address, verdict.range));
    } else if (/(^|\.)localhost\.?$/i.test(host)) {
      // RFC 6761: loopback whatever a resolver says, as in the guarded fetch.
      if (!policy.check("127.0.0.1").allowed) return failLater(this, blockedAddressError("127.0.0.1", "loopback", host));
      options.host = "127.0.0.1";
    } else {
      options.lookup = guardedLookup;
    }
    const callback = typeof args[args.length - 1] === "function" ? args[args.length - 1] : undefined;
    open.add(this);
    this.once("close", () => open.delete(this));
    return (connect as (...a: unknown[]) => net.Socket).call(this, options, callback);
  } as typeof net.Socket.prototype.connect;

  const guardedFetch = createGuardedFetch({ policy });
  globalThis.fetch = Object.assign((input: string | URL | Request, init?: RequestInit) => guardedFetch(input as string | URL, init), {
    preconnect: () => {},
  }) as typeof fetch;
  if (typeof Bun !== "undefined") {
    (Bun as unknown as { connect: unknown }).connect = () => {
      throw new SsrfBlockedError("Bun.connect is not available to pieces; use node:net, whose connections the address policy checks");
    };
  }
  return guard;
}

/** The options object of any `socket.connect(...)` call form: (options[, cb]), (port[, host][, cb]), (path[, cb]). */
function connectOptions(args: unknown[]): Record<string, unknown> & { host?: unknown; path?: unknown; lookup?: unknown } {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (first !== null && typeof first === "object") return { ...(first as Record<string, unknown>) };
  if (typeof first === "string" && !/^\d+$/.test(first)) return { path: first };
  return { port: first, host: typeof args[1] === "string" ? args[1] : undefined };
}

/** Fails the socket as a refused connection does: an 'error' event on the next tick. */
function failLater(socket: net.Socket, error: Error): net.Socket {
  process.nextTick(() => socket.destroy(error));
  return socket;
}
