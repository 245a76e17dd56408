/**
 * Liveness (GET /healthz): the process answers, and so did its database a moment ago. A probe answers from the
 * last round trip to the database when it is fresh (under a second old) and never waits for one then: on
 * PostgreSQL a round trip waits for a backend, and while heavy reads keep the backends busy a probe that queried
 * each time took 25–35 ms to answer where the process itself answered in 1–2 (docs/scaling.md). A probe that
 * finds it older starts the next one and still answers from the last, up to `staleMs`; past that (a probe every
 * few seconds, or the first), after a failed round trip, or before any, it waits for the round trip and answers
 * from it. A database that stops answering fails /healthz within about a second of the next probe; one that
 * hangs, once `staleMs` has passed. Round trips never overlap: probes arriving together share one.
 */
import type { Clock } from "../lib/clock";
import type { Storage } from "../store/port";

export interface LivenessOptions {
  /** The vital signs' port (on PostgreSQL connections of its own: a probe never queues behind busy requests). */
  storage: Pick<Storage, "ping">;
  clock: Clock;
  /** A round trip this recent answers a probe as it is (default 1 s). */
  freshMs?: number;
  /** Older than `freshMs` and up to this, a probe answers from it while the next one runs (default 5 s). */
  staleMs?: number;
}

export class Liveness {
  private readonly freshMs: number;
  private readonly staleMs: number;
  /** When the last successful round trip ended (clock ms); none yet at the start. */
  private answeredAt = Number.NEGATIVE_INFINITY;
  /** Whether the latest round trip failed: the next probe waits for a new one and answers from it. */
  private failed = false;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly options: LivenessOptions) {
    this.freshMs = options.freshMs ?? 1_000;
    this.staleMs = options.staleMs ?? 5_000;
  }

  /** Resolves when the process may say it is alive; rejects with the database's error when it does not answer. */
  async check(): Promise<void> {
    const age = this.options.clock.now() - this.answeredAt;
    if (!this.failed && age <= this.freshMs) return;
    const roundTrip = this.roundTrip();
    if (!this.failed && age <= this.staleMs) {
      // Its outcome is for the probes after this one (a failure is kept in `failed`).
      roundTrip.catch(() => undefined);
      return;
    }
    await roundTrip;
  }

  /** The round trip under way, or a new one. */
  private roundTrip(): Promise<void> {
    this.inFlight ??= this.options.storage.ping().then(
      () => {
        this.answeredAt = this.options.clock.now();
        this.failed = false;
        this.inFlight = undefined;
      },
      (error: unknown) => {
        this.failed = true;
        this.inFlight = undefined;
        throw error;
      },
    );
    return this.inFlight;
  }
}
