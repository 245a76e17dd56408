/**
 * The cluster's bus: small messages between instances sharing a PostgreSQL database, by LISTEN/NOTIFY on a
 * connection of its own (Bun's SQL client reconnects it and listens again after a drop). Messages are JSON,
 * well under PostgreSQL's 8,000-byte payload limit: they name what changed (a run id), and the receiver reads
 * the rest from the database. A notification reaches every instance listening when it is sent, itself
 * included; one sent while an instance is reconnecting is lost to it, so every receiver also looks again on a
 * timer. On SQLite there is one instance and no bus.
 */
import { SQL } from "bun";
import type { Db } from "./db";
import { isPostgres } from "./postgres/sync-db";

export interface Bus {
  publish(channel: string, message: unknown): void;
  /** Resolves once the server listens for the channel; the function stops listening. */
  subscribe(channel: string, listener: (message: unknown) => void): Promise<() => void>;
  close(): Promise<void>;
}

export function openBus(db: Db, onError: (error: unknown) => void): Bus | null {
  if (!isPostgres(db)) return null;
  const sql = new SQL(db.url, { max: 1 });
  let closed = false;
  return {
    publish(channel, message) {
      if (closed) return;
      sql.notify(channel, JSON.stringify(message)).catch(onError);
    },
    async subscribe(channel, listener) {
      const subscription = await sql.listen(channel, (payload) => {
        let message: unknown;
        try {
          message = JSON.parse(payload);
        } catch {
          return; // not ours
        }
        try {
          listener(message);
        } catch (error) {
          onError(error);
        }
      });
      return () => void subscription.unlisten().catch(() => undefined);
    },
    async close() {
      closed = true;
      await sql.close().catch(() => undefined);
    },
  };
}
