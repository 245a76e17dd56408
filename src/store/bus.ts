/**
 * The cluster's bus: small messages between instances sharing a PostgreSQL database, by LISTEN/NOTIFY on
 * connections of its own (Bun's SQL client reconnects it and listens again after a drop:
 * postgres/bus-connection.ts). Messages are JSON,
 * mostly small: they name what changed (a run id), and the receiver reads the rest from the database. One
 * longer than a notification may carry (PostgreSQL's limit is 8,000 bytes; a webhook reply can be larger) is
 * sent in parts on the same connection, which PostgreSQL delivers in order, and put together again. A
 * notification reaches every instance listening when it is sent, itself included; one sent while an instance
 * is reconnecting is lost to it, so every receiver also looks again on a timer. On SQLite there is one
 * instance and no bus.
 */
import type { Db } from "./db";
import { PostgresBusConnection } from "./postgres/bus-connection";
import { isPostgres } from "./postgres/handle";

export interface Bus {
  publish(channel: string, message: unknown): void;
  /** Resolves once the server listens for the channel; the function stops listening. */
  subscribe(channel: string, listener: (message: unknown) => void): Promise<() => void>;
  close(): Promise<void>;
}

/** Characters of one notification's payload (PostgreSQL allows 8,000 bytes; a character may take 3 in UTF-8 JSON). */
const PART_CHARS = 2_500;
/** Parts of messages being put together, per sender and message; an unfinished one is dropped after this long. */
const PARTS_TTL_MS = 30_000;

interface Part {
  /** Sender and message: unique across the cluster. */
  p: string;
  i: number;
  n: number;
  d: string;
}

/** The bus of each store and how many hold it: one per process, whoever listens. */
const shared = new WeakMap<Db, { bus: Bus; holders: number }>();

/**
 * The process's bus on `db` (null on SQLite), shared by everything that opens one: the run links and
 * Settings → Network send and listen on the same connections (Bun's client holds two: one sends, one
 * listens), and the second to open it waits for no handshake of its own at start-up. It closes when the last
 * holder closes it. Errors of sending go to the first holder's `onError`, a listener's to its own holder's.
 */
export function openBus(db: Db, onError: (error: unknown) => void): Bus | null {
  if (!isPostgres(db)) return null;
  let entry = shared.get(db);
  if (!entry) {
    entry = { bus: connectBus(new PostgresBusConnection(db.url, onError)), holders: 0 };
    shared.set(db, entry);
  }
  const held = entry;
  held.holders++;
  let closed = false;
  // This holder's subscriptions end when it closes, whoever else still holds the bus.
  const unlisten: Array<() => void> = [];
  return {
    publish: (channel, message) => {
      if (!closed) held.bus.publish(channel, message);
    },
    subscribe: async (channel, listener) => {
      const off = await held.bus.subscribe(channel, (message) => {
        if (closed) return;
        try {
          listener(message);
        } catch (error) {
          onError(error);
        }
      });
      unlisten.push(off);
      return off;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      for (const off of unlisten) off();
      if (--held.holders > 0) return;
      if (shared.get(db) === held) shared.delete(db);
      await held.bus.close();
    },
  };
}

function connectBus(connection: PostgresBusConnection): Bus {
  const sender = crypto.randomUUID();
  let sent = 0;
  let closed = false;
  const notify = (channel: string, payload: string) => connection.notify(channel, payload);
  const assembler =
    (partial: Map<string, { parts: string[]; at: number }>) =>
    (part: Part): string | null => {
      const now = Date.now();
      for (const [key, entry] of partial) if (now - entry.at > PARTS_TTL_MS) partial.delete(key);
      const entry = partial.get(part.p) ?? { parts: [], at: now };
      if (part.i !== entry.parts.length) {
        partial.delete(part.p); // a part was lost (a reconnect): the whole message is
        return null;
      }
      entry.parts.push(part.d);
      if (entry.parts.length < part.n) {
        partial.set(part.p, entry);
        return null;
      }
      partial.delete(part.p);
      return entry.parts.join("");
    };
  return {
    publish(channel, message) {
      if (closed) return;
      const text = JSON.stringify(message);
      if (text.length <= PART_CHARS) return notify(channel, text);
      const id = `${sender}:${++sent}`;
      const n = Math.ceil(text.length / PART_CHARS);
      for (let i = 0; i < n; i++) notify(channel, JSON.stringify({ p: id, i, n, d: text.slice(i * PART_CHARS, (i + 1) * PART_CHARS) } satisfies Part));
    },
    async subscribe(channel, listener) {
      const assemble = assembler(new Map());
      return await connection.listen(channel, (payload) => {
        let message: unknown;
        try {
          message = JSON.parse(payload);
          if (message && typeof message === "object" && "p" in message && "n" in message) {
            const whole = assemble(message as Part);
            if (whole === null) return;
            message = JSON.parse(whole);
          }
        } catch {
          return; // not ours
        }
        // A listener's errors are its holder's (openBus).
        listener(message);
      });
    },
    async close() {
      closed = true;
      await connection.close();
    },
  };
}
