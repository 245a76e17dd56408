/**
 * Talking to Home Assistant: its REST API through ctx.fetch (the SSRF guard), and its WebSocket API
 * (/api/websocket) through home-assistant-js-websocket, Home Assistant's own client (commands, results,
 * subscriptions, ping). Its sockets come from `guardedSocket` below: before one opens, the host passes the
 * same address policy as ctx.fetch (allowedAddress), and Bun's WebSocket goes to the checked address
 * itself, with the original name in the Host header and as the TLS server name, so a name cannot resolve
 * elsewhere between the check and the connect. docs/pieces/home-assistant.md describes the messages used.
 */
import type { Connection, HaWebSocket } from "home-assistant-js-websocket";
import { allowedAddress, baseUrlOf, httpRequest, loadOnce } from "../../src/pieces-sdk";
import type { GuardedFetch, ResolvedAuth } from "../../src/pieces-sdk/types";

/** home-assistant-js-websocket, loaded with the first Home Assistant step or subscription. */
const haws = loadOnce(() => import("home-assistant-js-websocket"));

/** How long opening a socket and its authentication may take. */
const OPEN_TIMEOUT_MS = 10_000;

export interface Instance {
  /** The base URL without a trailing slash, e.g. http://192.168.1.20:8123 */
  base: URL;
  token: string;
}

/** The connection's base URL and long-lived access token, or why they are unusable. */
export function instanceOf(auth: ResolvedAuth | undefined): Instance {
  if (auth?.kind !== "custom") throw new Error("this step needs a Home Assistant connection (base URL and long-lived access token); set its connectionId");
  const base = new URL(baseUrlOf(auth.values.url, "the Home Assistant URL", "http://192.168.1.20:8123 or https://ha.example.com"));
  const token = String(auth.values.token ?? "").trim();
  if (!token) throw new Error("the connection has no access token; create a long-lived access token in Home Assistant (your profile → Security)");
  return { base, token };
}

const REFUSED_TOKEN =
  "Home Assistant refused the access token; create a long-lived access token in Home Assistant (your profile → Security) and put it in the connection";

/**
 * One REST call (`path` starts with /api/). Answers the parsed JSON, or the text when the answer is not
 * JSON (a rendered template); `notFound` is the message for a 404. Other refusals throw with Home Assistant's own words.
 */
export function rest(
  fetch: GuardedFetch,
  instance: Instance,
  method: string,
  path: string,
  options: { body?: unknown; signal?: AbortSignal; notFound?: string } = {},
): Promise<unknown> {
  return httpRequest(fetch, `${instance.base.href.replace(/\/+$/, "")}${path}`, {
    service: "Home Assistant",
    method,
    label: `${method} ${path}`,
    headers: { authorization: `Bearer ${instance.token}` },
    json: options.body,
    signal: options.signal,
    explain: ({ status }) => (status === 401 ? REFUSED_TOKEN : status === 404 ? options.notFound : undefined),
  });
}

/** Why each socket closed (code and reason), read when its connection reports the loss. */
const closeReasons = new WeakMap<WebSocket, string>();

/**
 * A socket to {base}/api/websocket, authenticated (auth_required → auth → auth_ok), for the library's
 * `createSocket` option: its own createSocket opens `new WebSocket(url)`, which cannot carry the Host
 * header and TLS server name that connecting to the checked address needs.
 */
async function guardedSocket(fetch: GuardedFetch, instance: Instance): Promise<HaWebSocket> {
  const { base } = instance;
  const host = base.hostname.replace(/^\[|\]$/g, "");
  const address = await allowedAddress(fetch, host);
  const target = new URL(base.href);
  target.protocol = base.protocol === "https:" ? "wss:" : "ws:";
  target.hostname = address.includes(":") ? `[${address}]` : address;
  target.pathname = `${base.pathname.replace(/\/+$/, "")}/api/websocket`;
  const tls = base.protocol === "https:" && address !== host ? { tls: { serverName: host } } : {};
  const options: Bun.WebSocketOptions = { headers: { host: base.host }, ...tls };
  // Bun's WebSocket takes these options; the global's DOM typing only knows a protocol list.
  const socket = new WebSocket(target.href, options as unknown as string[]) as HaWebSocket;
  socket.addEventListener("close", (event) => closeReasons.set(socket, `code ${event.code}${event.reason ? `: ${event.reason}` : ""}`));
  const origin = base.origin;
  return new Promise<HaWebSocket>((resolve, reject) => {
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.close();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new Error(`Home Assistant at ${origin} did not finish authentication within ${OPEN_TIMEOUT_MS / 1000} s`)),
      OPEN_TIMEOUT_MS,
    );
    const onMessage = (message: MessageEvent) => {
      let frame: { type?: string; ha_version?: string; message?: string };
      try {
        frame = JSON.parse(String(message.data));
      } catch {
        return fail(new Error(`${origin}/api/websocket does not speak Home Assistant's WebSocket API (a frame that is not JSON)`));
      }
      if (frame.type === "auth_required") socket.send(JSON.stringify({ type: "auth", access_token: instance.token }));
      else if (frame.type === "auth_ok") {
        clearTimeout(timer);
        socket.removeEventListener("message", onMessage);
        socket.removeEventListener("close", onClose);
        socket.haVersion = frame.ha_version ?? "";
        resolve(socket);
      } else if (frame.type === "auth_invalid") fail(new Error(`${REFUSED_TOKEN} (it said: ${frame.message ?? "invalid"})`));
    };
    const onClose = (event: CloseEvent) => fail(new Error(`could not connect to Home Assistant at ${origin}: the connection closed (code ${event.code})`));
    socket.addEventListener("message", onMessage);
    socket.addEventListener("close", onClose);
    socket.addEventListener("error", () => fail(new Error(`could not connect to Home Assistant at ${origin} (WebSocket /api/websocket)`)));
  });
}

/**
 * An authenticated connection. It does not reconnect by itself for long: a subscription reports the loss
 * (`onLost`) and Weft's subscription host opens a new one with its back-off.
 */
export async function connect(fetch: GuardedFetch, instance: Instance): Promise<Connection> {
  const { createConnection } = await haws();
  return createConnection({ createSocket: () => guardedSocket(fetch, instance) });
}

/** A failure of the library (HA's error object, or one of its error numbers) as an Error a user can read. */
export function haFailure(error: unknown): Error {
  if (error instanceof Error) return error;
  const detail = (error as { error?: { code?: unknown; message?: unknown } } | null)?.error ?? (error as { code?: unknown; message?: unknown } | null);
  if (detail && typeof detail === "object" && typeof detail.message === "string")
    return new Error(`Home Assistant: ${detail.message}${detail.code !== undefined ? ` (${detail.code})` : ""}`);
  if (error === 3) return new Error("the connection to Home Assistant was lost");
  return new Error(`Home Assistant: ${String(error)}`);
}

/** Connects, runs `work`, and closes; failures read as Home Assistant's words. */
export async function withConnection<T>(fetch: GuardedFetch, instance: Instance, work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await connect(fetch, instance);
  try {
    return await work(connection);
  } catch (error) {
    throw haFailure(error);
  } finally {
    connection.close();
  }
}

/**
 * Watches a long-lived connection: `onLost` hears, once, that its socket closed, or that a ping (HA's
 * ping/pong) went unanswered for `pingEveryMs` — a stalled instance, or a link that died without a word.
 * Answers the function that stops watching (call it before closing).
 */
export function watch(connection: Connection, pingEveryMs: number, onLost: (reason: string) => void): () => void {
  const socket = connection.socket;
  let done = false;
  const lost = (reason: string) => {
    if (done) return;
    stop();
    onLost(reason);
  };
  const disconnected = () => lost(`the connection to Home Assistant closed (${(socket && closeReasons.get(socket)) ?? "no reason given"})`);
  connection.addEventListener("disconnected", disconnected);
  const heartbeat = setInterval(() => {
    let answered = false;
    connection.ping().then(
      () => {
        answered = true;
      },
      () => undefined,
    );
    setTimeout(() => {
      if (!answered) lost(`Home Assistant stopped answering pings (no pong within ${pingEveryMs / 1000} s)`);
    }, pingEveryMs).unref?.();
  }, pingEveryMs);
  heartbeat.unref?.();
  function stop() {
    done = true;
    clearInterval(heartbeat);
    connection.removeEventListener("disconnected", disconnected);
  }
  return stop;
}
