/**
 * The cluster bus's connections to PostgreSQL (../bus.ts): LISTEN on a connection Bun's client keeps for it
 * (reconnected, and listening again, after a drop) and NOTIFY on another, both awaited on the calling thread.
 * Notifications queued while one is on its way are sent together in one statement, in order: PostgreSQL
 * delivers a statement's notifications in the order they were sent.
 */
import type { SQL } from "bun";
import { CONNECTION_NAMES } from "./connection";

export class PostgresBusConnection {
  private readonly sql: SQL;
  private queued: Array<[string, string]> = [];
  private sending: Promise<void> | null = null;
  private closed = false;

  /** `onError`: told of a failure to send notifications (they are lost: every receiver also reads again on a timer). */
  constructor(
    url: string,
    private readonly onError: (error: Error) => void,
  ) {
    // adapter: the URL alone would let a mysql:// or sqlite: URL pick another driver.
    this.sql = new Bun.SQL(url, { adapter: "postgres", max: 1, connection: { application_name: CONNECTION_NAMES.bus } });
  }

  notify(channel: string, payload: string): void {
    if (this.closed) return;
    this.queued.push([channel, payload]);
    this.sending ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued;
      this.queued = [];
      await this.sql
        .unsafe("SELECT pg_notify(x->>0, x->>1) FROM jsonb_array_elements($1::text::jsonb) AS x", [JSON.stringify(batch)])
        .catch((error) => this.onError(error instanceof Error ? error : new Error(String(error))));
    }
    this.sending = null;
  }

  /** Resolves once the server listens; the returned function stops listening. */
  async listen(channel: string, listener: (payload: string) => void): Promise<() => void> {
    const subscription = await this.sql.listen(channel, listener);
    return () => void subscription.unlisten().catch(() => {});
  }

  /** Sends what is queued, then closes both connections. */
  async close(): Promise<void> {
    this.closed = true;
    await this.sending;
    await this.sql.close().catch(() => {});
  }
}
