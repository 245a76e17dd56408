/**
 * The timer of the scheduler and the poller: runs `tick` until `stop()`, sleeping after each tick until the
 * next due instant the storage names (at least 10 ms, at most `maxSleepMs`; `maxSleepMs` when none is due).
 * The loop catches every error itself: a failing tick or read is logged, and it goes on.
 */
import type { Logger } from "../../http/logger";
import type { Clock } from "../../lib/clock";

export interface DueLoopOptions {
  tick: () => Promise<unknown>;
  /** The next due instant (ms), or null when nothing is due before `maxSleepMs`. */
  nextDue: () => Promise<number | null>;
  maxSleepMs: number;
  clock: Clock;
  log: Logger;
  /** What the log says when a tick fails, and when the next due instant could not be read. */
  messages: { tickFailed: string; readFailed: string };
}

export class DueLoop {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;

  constructor(private readonly o: DueLoopOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async () => {
      if (!this.running) return;
      try {
        await this.o.tick();
      } catch (error) {
        this.o.log.error(this.o.messages.tickFailed, { error: (error as Error).message });
      }
      if (!this.running) return;
      let sleep = this.o.maxSleepMs;
      try {
        const next = await this.o.nextDue();
        if (next !== null) sleep = Math.max(10, Math.min(this.o.maxSleepMs, next - this.o.clock.now()));
      } catch (error) {
        this.o.log.error(this.o.messages.readFailed, { error: (error as Error).message });
      }
      if (this.running) this.timer = setTimeout(() => void loop(), sleep);
    };
    void loop();
  }

  /** No tick starts after this; the caller waits for the one under way. */
  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
