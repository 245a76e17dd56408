/**
 * Events POSTed to an HTTP endpoint in batches (docs/operations.md, "Log streaming"): a JSON array of up to
 * `batch` events, sent when that many are queued or a second after the first one, one request at a time so
 * the endpoint sees them in order. A failure that may pass (no answer, a timeout, 408, 429, 5xx) is retried
 * with a doubling pause (0.5 s … 30 s, or the 429/503's Retry-After) for as long as it lasts; meanwhile new
 * events queue, and past `queue` they are dropped and counted. Any other answer (a 4xx: the endpoint will
 * never take that batch) drops the batch, counted and logged.
 *
 *   const http = new HttpDestination({ url, headers, batch: 100, queue: 10_000, log });
 *   http.send(event); await http.flush();
 *
 * The URL is the operator's (WEFT_LOG_HTTP_URL), so it is reached with the plain fetch, not the SSRF guard
 * that holds workflows' calls.
 */
import type { Logger } from "../../http/logger";
import { type Destination, type DestinationStats, DropCounter, type StreamEvent } from "./events";

/** Wait after the first queued event before a batch that is not full goes out, ms. */
const LINGER_MS = 1_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
/** Longest a POST may take before it counts as failed (and is retried), ms. */
const REQUEST_TIMEOUT_MS = 10_000;

export interface HttpDestinationOptions {
  url: string;
  headers: Record<string, string>;
  batch: number;
  queue: number;
  log: Logger;
  /** The pause before retry number `attempt` (1, 2, …), ms; tests shorten it. */
  retryDelayMs?: (attempt: number) => number;
}

export class HttpDestination implements Destination {
  readonly name: string;
  private readonly drops: DropCounter;
  private readonly queue: StreamEvent[] = [];
  private sent = 0;
  private sending: Promise<void> | undefined;
  private lingerTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** Wakes a retry pause early (close). */
  private wake: (() => void) | undefined;
  /** Ends a POST in flight (close). */
  private readonly stopping = new AbortController();

  constructor(private readonly o: HttpDestinationOptions) {
    this.name = `http ${new URL(o.url).origin}`;
    this.drops = new DropCounter(this.name, o.log);
  }

  get stats(): DestinationStats {
    return { sent: this.sent, dropped: this.drops.total, queued: this.queue.length };
  }

  send(event: StreamEvent): void {
    if (this.closed) return;
    if (this.queue.length >= this.o.queue) {
      this.drops.drop(1, "its queue is full (the endpoint is slow or failing)");
      return;
    }
    this.queue.push(event);
    if (this.sending) return;
    if (this.queue.length >= this.o.batch) this.start();
    else if (!this.lingerTimer) {
      this.lingerTimer = setTimeout(() => this.start(), LINGER_MS);
      this.lingerTimer.unref?.();
    }
  }

  /** Sends everything queued now (retrying as long as it takes, or until close). */
  async flush(): Promise<void> {
    while (this.queue.length > 0 || this.sending) {
      this.start();
      await this.sending;
    }
  }

  /** Stops at once: a POST in flight is ended, and what is not delivered is dropped, counted. */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    this.stopping.abort(new Error("the server is stopping"));
    clearTimeout(this.lingerTimer);
    await this.sending;
    if (this.queue.length > 0) this.drops.drop(this.queue.length, "the server stopped before the endpoint took them");
    this.queue.length = 0;
  }

  private start(): void {
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    if (this.sending || this.queue.length === 0) return;
    this.sending = this.drain().finally(() => {
      this.sending = undefined;
    });
  }

  /** Sends batch after batch until the queue is empty (a batch that is not full waits for no one here). */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.o.batch);
      const delivered = await this.deliver(batch);
      this.queue.splice(0, batch.length);
      if (delivered) this.sent += batch.length;
      if (this.closed && !delivered) {
        this.drops.drop(this.queue.length, "the server stopped before the endpoint took them");
        this.queue.length = 0;
      }
    }
  }

  /** POSTs one batch, retrying what may pass; false when it was given up. */
  private async deliver(batch: StreamEvent[]): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      let failure: string;
      let retryAfterMs: number | undefined;
      try {
        const response = await fetch(this.o.url, {
          method: "POST",
          headers: { "content-type": "application/json", ...this.o.headers },
          body: JSON.stringify(batch),
          signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), this.stopping.signal]),
        });
        await response.arrayBuffer().catch(() => undefined);
        if (response.ok) return true;
        failure = `the endpoint answered ${response.status}`;
        if (!retryable(response.status)) {
          this.drops.drop(batch.length, `${failure}, which is not retried`);
          return false;
        }
        retryAfterMs = retryAfter(response.headers.get("retry-after"));
      } catch (error) {
        failure = `the POST failed: ${(error as Error).message}`;
      }
      if (this.closed) {
        this.drops.drop(batch.length, `${failure}, and the server is stopping`);
        return false;
      }
      const pause = retryAfterMs ?? this.o.retryDelayMs?.(attempt) ?? Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (attempt - 1));
      if (attempt === 1 || attempt % 10 === 0)
        this.o.log.warn("log streaming: a batch is retried", { destination: this.name, events: batch.length, attempt, failure, retryInMs: pause });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        timer.unref?.();
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }
}

const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

/** Retry-After in seconds (an HTTP date is not honoured), capped at the longest pause. */
function retryAfter(value: string | null): number | undefined {
  if (!value || !/^\d+$/.test(value.trim())) return undefined;
  return Math.min(MAX_RETRY_MS, Number(value.trim()) * 1000);
}
