/**
 * What log streaming sends (docs/operations.md, "Log streaming"): events, each a flat JSON object with its
 * `type` (`run.started`, `run.finished`, `token.created`, `workflow.published`, …), its `time` and its
 * `severity`, and the destinations that take them (syslog, an HTTP endpoint). Any part of Weft may emit an
 * event through an `EventSink`; it costs nothing when no destination is configured.
 *
 *   sink.emit("token.created", { workspaceId, tokenId, name, scopes });
 */
import type { Logger } from "../../http/logger";
import { type Clock, systemClock } from "../../lib/clock";

export type Severity = "info" | "notice" | "warning" | "error";

export interface StreamEvent {
  type: string;
  /** ISO 8601, UTC, milliseconds. */
  time: string;
  severity: Severity;
  [field: string]: unknown;
}

/** Where events are told: the log stream, or nothing. Never throws, never waits. */
export interface EventSink {
  emit(type: string, fields: Record<string, unknown>, severity?: Severity): void;
}

export interface DestinationStats {
  /** Events handed to the transport (a datagram sent, a frame written, a batch answered 2xx). */
  sent: number;
  /** Events given up: the queue was full, the endpoint refused them, a datagram failed. */
  dropped: number;
  /** Events waiting to be sent. */
  queued: number;
  /** A stream transport's connection is open (syslog over TCP or TLS). */
  connected?: boolean;
}

export interface Destination {
  readonly name: string;
  readonly stats: DestinationStats;
  /** Queues an event; drops it (counted) when the queue is full. */
  send(event: StreamEvent): void;
  /** Resolves once what is queued now was sent, or gave up, or after a while. */
  flush(): Promise<void>;
  /** Stops at once: what is still queued is dropped, counted (LogStream.close flushes first, a while). */
  close(): Promise<void>;
}

/** Least time between two warnings about dropped events of one destination, ms. */
const DROP_LOG_MS = 10_000;

/** Counts dropped events and says so in the log, at most once every ten seconds per destination. */
export class DropCounter {
  total = 0;
  private unlogged = 0;
  private lastLog = 0;

  constructor(
    private readonly destination: string,
    private readonly log: Logger,
    /** What "ten seconds" is measured by (docs/architecture.md, "Time"). */
    private readonly clock: Clock = systemClock,
  ) {}

  drop(count: number, reason: string): void {
    this.total += count;
    this.unlogged += count;
    const now = this.clock.now();
    if (now - this.lastLog < DROP_LOG_MS) return;
    this.lastLog = now;
    this.log.warn("log streaming dropped events", { destination: this.destination, dropped: this.unlogged, droppedTotal: this.total, reason });
    this.unlogged = 0;
  }
}
