/**
 * A TCP proxy on 127.0.0.1 in front of a PostgreSQL server that makes it look remote: every chunk is delivered
 * `delayMs` after it arrived, in order, per connection and direction, so a round trip grows by ~2×delayMs
 * (JavaScript timers tick in whole milliseconds: a chunk waits at least its delay, up to ~1 ms more). Chunks
 * due together go out in one write, so the delay adds latency without capping throughput. A test can also
 * stall one connection, or the next query whose text matches, while the other connections flow.
 *
 *   const proxy = await startLatencyProxy(pg.url, { delayMs: 1 });
 *   const sql = new Bun.SQL(proxy.url(pg.url));            // any database on that server
 *   await proxy.measureRttMs();                             // ≈ 2 ms more than direct
 *   const held = proxy.stallNextQuery("FROM runs", 500);    // resolves with the connection it held
 *   await proxy.stop();                                     // every socket closed
 */
import type { Socket } from "bun";

interface Direction {
  /** Chunks waiting for their instant, oldest first. */
  queue: Array<{ due: number; data: Uint8Array }>;
  /** The latest instant handed out: a later chunk is never due before an earlier one (setDelay may shrink). */
  lastDue: number;
  /** A stall: nothing is delivered before this instant. */
  heldUntil: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Bytes the destination has not taken yet (backpressure); the source is paused meanwhile. */
  backlog: Uint8Array[];
  /** The source closed: end the destination once everything is delivered. */
  ended: boolean;
}

interface Link {
  id: number;
  client: Socket<Link>;
  server: Socket<Link> | undefined;
  /** Client → server. */
  up: Direction;
  /** Server → client. */
  down: Direction;
  /** Chunks received from each side. */
  chunks: { up: number; down: number };
}

export interface LatencyProxy {
  port: number;
  /** `databaseUrl` (a postgres:// URL on the proxied server) with its host and port turned to the proxy's. */
  url(databaseUrl: string): string;
  /** The median of `samples` timed `SELECT 1` on a fresh connection through the proxy, ms. */
  measureRttMs(samples?: number): Promise<number>;
  setDelay(ms: number): void;
  /** Ids of the open connections, in the order they were accepted. */
  connections(): number[];
  /** Chunks each open connection's client has sent (up) and received (down): a query is usually one each way. */
  traffic(): Array<{ id: number; up: number; down: number }>;
  /** Holds what connection `id`'s client sends for the next `ms` (what is already on its way too). */
  stallConnection(id: number, ms: number): void;
  /** Holds the next chunk a client sends whose text contains `pattern` (and what follows it on its connection) for `ms`; answers that connection's id. */
  stallNextQuery(pattern: string | RegExp, ms: number): Promise<number>;
  /** Closes the listener and every socket, held or not. */
  stop(): Promise<void>;
}

/** The median of `samples` timed `SELECT 1` on a fresh connection to `databaseUrl`, after five untimed ones, ms. */
export async function measureRttMs(databaseUrl: string, samples = 41): Promise<number> {
  const sql = new Bun.SQL(databaseUrl, { adapter: "postgres", max: 1 });
  try {
    for (let i = 0; i < 5; i++) await sql`SELECT 1`;
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      await sql`SELECT 1`;
      times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  } finally {
    await sql.close();
  }
}

const direction = (): Direction => ({ queue: [], lastDue: 0, heldUntil: 0, timer: undefined, backlog: [], ended: false });

/** A proxy in front of the server of `databaseUrl` (postgres://user:password@host:port/db). */
export async function startLatencyProxy(databaseUrl: string, options: { delayMs?: number } = {}): Promise<LatencyProxy> {
  const upstream = new URL(databaseUrl);
  let delayMs = options.delayMs ?? 0;
  let nextId = 0;
  const links = new Map<number, Link>();
  let stopped = false;
  let matcher: { pattern: string | RegExp; ms: number; resolve: (id: number) => void } | undefined;

  const ends = (link: Link, dir: Direction) => (dir === link.up ? { from: link.client, to: link.server } : { from: link.server, to: link.client });

  const write = (link: Link, dir: Direction, bytes: Uint8Array) => {
    const { from, to } = ends(link, dir);
    if (!to) return;
    if (dir.backlog.length === 0) {
      const written = to.write(bytes);
      if (written < 0 || written === bytes.length) return;
      bytes = bytes.subarray(written);
    }
    dir.backlog.push(bytes);
    from?.pause();
  };

  const drain = (link: Link, dir: Direction) => {
    const { from, to } = ends(link, dir);
    while (to && dir.backlog.length > 0) {
      const bytes = dir.backlog[0]!;
      const written = to.write(bytes);
      if (written >= 0 && written < bytes.length) {
        dir.backlog[0] = bytes.subarray(written);
        return;
      }
      dir.backlog.shift();
    }
    from?.resume();
    if (dir.ended && dir.queue.length === 0) to?.end();
  };

  /** Delivers every chunk now due in one write, then sets a timer for the next one. */
  const pump = (link: Link, dir: Direction) => {
    const { to } = ends(link, dir);
    if (!to || stopped) return; // the server is still connecting: its open handler pumps
    const now = performance.now();
    let n = 0;
    if (dir.heldUntil <= now) while (n < dir.queue.length && dir.queue[n]!.due <= now) n++;
    if (n > 0) write(link, dir, n === 1 ? dir.queue[0]!.data : Buffer.concat(dir.queue.slice(0, n).map((c) => c.data)));
    dir.queue.splice(0, n);
    if (dir.queue.length > 0 && !dir.timer) dir.timer = setTimeout(wake, Math.ceil(Math.max(dir.queue[0]!.due, dir.heldUntil) - now), link, dir);
    else if (dir.queue.length === 0 && dir.ended && dir.backlog.length === 0) to.end();
  };

  const wake = (link: Link, dir: Direction) => {
    dir.timer = undefined;
    pump(link, dir);
  };

  const receive = (link: Link, dir: Direction, data: Uint8Array) => {
    const now = performance.now();
    link.chunks[dir === link.up ? "up" : "down"]++;
    if (matcher && dir === link.up) {
      const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("latin1");
      const { pattern, ms, resolve } = matcher;
      if (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) {
        matcher = undefined;
        dir.heldUntil = now + ms;
        resolve(link.id);
      }
    }
    const due = Math.max(now + delayMs, dir.lastDue);
    dir.lastDue = due;
    const to = ends(link, dir).to;
    if (due <= now && dir.heldUntil <= now && dir.queue.length === 0 && to) return write(link, dir, data);
    dir.queue.push({ due, data }); // Bun hands each data callback a buffer of its own: kept without a copy
    pump(link, dir);
  };

  /** One side closed: what it sent still goes out on time, then the other side is ended. */
  const closed = (link: Link, dir: Direction) => {
    dir.ended = true;
    if (link.up.ended && link.down.ended) links.delete(link.id);
    pump(link, dir);
  };

  const listener = Bun.listen<Link>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        const link: Link = { id: nextId++, client, server: undefined, up: direction(), down: direction(), chunks: { up: 0, down: 0 } };
        client.data = link;
        links.set(link.id, link);
        Bun.connect<Link>({
          hostname: upstream.hostname,
          port: Number(upstream.port || 5432),
          data: link,
          socket: {
            open(server) {
              if (stopped) return server.terminate();
              server.setNoDelay(true);
              link.server = server;
              pump(link, link.up);
            },
            data: (server, data) => receive(server.data, server.data.down, data),
            drain: (server) => drain(server.data, server.data.up),
            close: (server) => closed(server.data, server.data.down),
            connectError: () => void client.end(),
          },
        }).catch(() => client.end());
      },
      data: (client, data) => receive(client.data, client.data.up, data),
      drain: (client) => drain(client.data, client.data.down),
      close: (client) => closed(client.data, client.data.up),
    },
  });

  const proxy: LatencyProxy = {
    port: listener.port,
    url(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(listener.port);
      return url.toString();
    },
    measureRttMs: (samples) => measureRttMs(proxy.url(databaseUrl), samples),
    setDelay(ms) {
      delayMs = ms;
    },
    connections: () => [...links.keys()],
    traffic: () => [...links.values()].map((link) => ({ id: link.id, ...link.chunks })),
    stallConnection(id, ms) {
      const link = links.get(id);
      if (!link) throw new Error(`no open connection ${id} (open: ${[...links.keys()].join(", ") || "none"})`);
      link.up.heldUntil = performance.now() + ms;
    },
    stallNextQuery(pattern, ms) {
      return new Promise((resolve) => {
        matcher = { pattern, ms, resolve };
      });
    },
    async stop() {
      stopped = true;
      listener.stop(true);
      for (const link of [...links.values()]) {
        for (const dir of [link.up, link.down]) clearTimeout(dir.timer);
        link.client.terminate();
        link.server?.terminate();
        links.delete(link.id);
      }
    },
  };
  return proxy;
}
