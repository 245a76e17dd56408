/**
 * Talking to Home Assistant: its REST API through ctx.fetch (the SSRF guard), and its WebSocket API
 * (/api/websocket) through Bun's WebSocket client. Before a socket opens, the host passes the same address
 * policy as ctx.fetch (allowedAddress): the socket goes to the checked address itself, with the original
 * name in the Host header and as the TLS server name, so a name cannot resolve elsewhere between the check
 * and the connect. docs/pieces/home-assistant.md describes the messages used.
 */
import { allowedAddress } from "../../src/pieces-sdk";
import type { GuardedFetch, ResolvedAuth } from "../../src/pieces-sdk/types";

/** How long opening a socket and its authentication may take, and one command's answer. */
const OPEN_TIMEOUT_MS = 10_000;
const COMMAND_TIMEOUT_MS = 30_000;

export interface Instance {
  /** The base URL without a trailing slash, e.g. http://192.168.1.20:8123 */
  base: URL;
  token: string;
}

/** The connection's base URL and long-lived access token, or why they are unusable. */
export function instanceOf(auth: ResolvedAuth | undefined): Instance {
  if (auth?.kind !== "custom") throw new Error("this step needs a Home Assistant connection (base URL and long-lived access token); set its connectionId");
  const text = String(auth.values.url ?? "")
    .trim()
    .replace(/\/+$/, "");
  let base: URL;
  try {
    base = new URL(text);
  } catch {
    throw new Error(`the Home Assistant URL "${text}" is not a URL; use e.g. http://192.168.1.20:8123 or https://ha.example.com`);
  }
  if (base.protocol !== "http:" && base.protocol !== "https:")
    throw new Error(`the Home Assistant URL must start with http:// or https://; got ${base.protocol}`);
  const token = String(auth.values.token ?? "").trim();
  if (!token) throw new Error("the connection has no access token; create a long-lived access token in Home Assistant (your profile → Security)");
  return { base, token };
}

const REFUSED_TOKEN =
  "Home Assistant refused the access token; create a long-lived access token in Home Assistant (your profile → Security) and put it in the connection";

/**
 * One REST call (`path` starts with /api/). Answers the parsed JSON, or the text when the answer is not
 * JSON; `notFound` is the message for a 404. Other refusals throw with Home Assistant's own words.
 */
export async function rest(
  fetch: GuardedFetch,
  instance: Instance,
  method: string,
  path: string,
  options: { body?: unknown; signal?: AbortSignal; notFound?: string } = {},
): Promise<unknown> {
  const url = `${instance.base.href.replace(/\/+$/, "")}${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${instance.token}`, ...(options.body === undefined ? {} : { "content-type": "application/json" }) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    throw new Error(`could not reach Home Assistant at ${instance.base.origin}: ${(error as Error).message}`);
  }
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (a rendered template, HA's plain-text 401): keep the text.
  }
  if (response.status === 401) throw new Error(REFUSED_TOKEN);
  if (response.status === 404 && options.notFound) throw new Error(options.notFound);
  if (!response.ok) {
    const reason = (parsed as { message?: unknown } | null)?.message ?? (typeof parsed === "string" ? parsed.slice(0, 200) : "");
    throw new Error(`Home Assistant answered ${response.status} to ${method} ${path}${reason ? `: ${reason}` : ""}`);
  }
  return parsed;
}

interface Frame {
  id?: number;
  type: string;
  success?: boolean;
  result?: unknown;
  error?: { code?: string; message?: string };
  event?: Record<string, unknown>;
  message?: string;
  ha_version?: string;
}

/**
 * An authenticated WebSocket session: commands carry increasing ids, and each answer (a `result` frame)
 * or event (an `event` frame) is routed by its id. `onClose` hears a connection that ends without close().
 */
export class Session {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; timer: ReturnType<typeof setTimeout> }>();
  private readonly listeners = new Map<number, (event: Record<string, unknown>) => void>();
  private closing = false;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  onClose: ((reason: string) => void) | undefined;

  private constructor(
    private readonly socket: WebSocket,
    readonly haVersion: string,
  ) {
    socket.addEventListener("message", (message) => this.receive(String(message.data)));
    socket.addEventListener("close", (event) =>
      this.ended(`the connection to Home Assistant closed (code ${event.code}${event.reason ? `: ${event.reason}` : ""})`),
    );
  }

  /** Connects to {base}/api/websocket and authenticates (auth_required → auth → auth_ok). */
  static async open(fetch: GuardedFetch, instance: Instance): Promise<Session> {
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
    const socket = new WebSocket(target.href, options as unknown as string[]);
    const origin = base.origin;
    const haVersion = await new Promise<string>((resolve, reject) => {
      const fail = (error: Error) => {
        clearTimeout(timer);
        socket.close();
        reject(error);
      };
      const timer = setTimeout(
        () => fail(new Error(`Home Assistant at ${origin} did not finish authentication within ${OPEN_TIMEOUT_MS / 1000} s`)),
        OPEN_TIMEOUT_MS,
      );
      let version = "";
      const onMessage = (message: MessageEvent) => {
        let frame: Frame;
        try {
          frame = JSON.parse(String(message.data));
        } catch {
          return fail(new Error(`${origin}/api/websocket does not speak Home Assistant's WebSocket API (a frame that is not JSON)`));
        }
        if (frame.type === "auth_required") {
          version = frame.ha_version ?? "";
          socket.send(JSON.stringify({ type: "auth", access_token: instance.token }));
        } else if (frame.type === "auth_ok") {
          clearTimeout(timer);
          socket.removeEventListener("message", onMessage);
          socket.removeEventListener("close", onClose);
          resolve(frame.ha_version ?? version);
        } else if (frame.type === "auth_invalid") {
          fail(new Error(`${REFUSED_TOKEN} (it said: ${frame.message ?? "invalid"})`));
        }
      };
      const onClose = (event: CloseEvent) => fail(new Error(`could not connect to Home Assistant at ${origin}: the connection closed (code ${event.code})`));
      socket.addEventListener("message", onMessage);
      socket.addEventListener("close", onClose);
      socket.addEventListener("error", () => fail(new Error(`could not connect to Home Assistant at ${origin} (WebSocket /api/websocket)`)));
    });
    return new Session(socket, haVersion);
  }

  /** Sends a command and answers its `result` (a ping its `pong`); a failed result throws with Home Assistant's code and message. */
  command(type: string, fields: Record<string, unknown> = {}, timeoutMs = COMMAND_TIMEOUT_MS): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.socket.readyState !== WebSocket.OPEN || this.closing) return reject(new Error("the connection to Home Assistant is closed"));
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`Home Assistant did not answer ${type} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.socket.send(JSON.stringify({ id, type, ...fields }));
    });
  }

  /** Sends a subscribing command (subscribe_events, subscribe_trigger); `onEvent` hears each event frame of it. */
  async subscribe(type: string, fields: Record<string, unknown>, onEvent: (event: Record<string, unknown>) => void): Promise<void> {
    const id = this.nextId;
    this.listeners.set(id, onEvent);
    try {
      await this.command(type, fields);
    } catch (error) {
      this.listeners.delete(id);
      throw error;
    }
  }

  /**
   * Pings every `everyMs` (HA's `ping` command, answered by `pong`): a connection that went silent without
   * closing — a stalled instance, a link that died without a FIN — counts as lost when a pong is late.
   */
  keepAlive(everyMs: number): void {
    this.heartbeat = setInterval(() => {
      this.command("ping", {}, everyMs).catch((error: Error) => this.lost(`Home Assistant stopped answering pings: ${error.message}`));
    }, everyMs);
    this.heartbeat.unref?.();
  }

  close(): void {
    this.closing = true;
    clearInterval(this.heartbeat);
    this.socket.close(1000, "done");
  }

  private receive(data: string) {
    let parsed: Frame | Frame[];
    try {
      parsed = JSON.parse(data);
    } catch {
      return;
    }
    for (const frame of Array.isArray(parsed) ? parsed : [parsed]) {
      if ((frame.type === "result" || frame.type === "pong") && frame.id !== undefined) {
        const waiting = this.pending.get(frame.id);
        if (!waiting) continue;
        this.pending.delete(frame.id);
        clearTimeout(waiting.timer);
        if (frame.success || frame.type === "pong") waiting.resolve(frame.result ?? null);
        else waiting.reject(new Error(`Home Assistant: ${frame.error?.message ?? "the command failed"}${frame.error?.code ? ` (${frame.error.code})` : ""}`));
      } else if (frame.type === "event" && frame.id !== undefined && frame.event) {
        this.listeners.get(frame.id)?.(frame.event);
      }
    }
  }

  /** The connection ended or went silent: what waits is refused, and `onClose` hears why (once, and not after close()). */
  private lost(reason: string) {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.heartbeat);
    this.refuseWaiting(reason);
    this.socket.close();
    this.onClose?.(reason);
  }

  private ended(reason: string) {
    if (this.closing) this.refuseWaiting(reason);
    else this.lost(reason);
  }

  private refuseWaiting(reason: string) {
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error(reason));
    }
    this.pending.clear();
  }
}

/** Opens a session, runs `work` with it, and closes it. */
export async function withSession<T>(fetch: GuardedFetch, instance: Instance, work: (session: Session) => Promise<T>): Promise<T> {
  const session = await Session.open(fetch, instance);
  try {
    return await work(session);
  } finally {
    session.close();
  }
}
