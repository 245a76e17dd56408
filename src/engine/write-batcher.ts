/**
 * Group commit: writes queued during one turn of the event loop share one transaction (one fsync).
 * `write(fn)` resolves after the transaction holding `fn` committed, so a caller can answer only once
 * its row is durable; `fire(fn)` is the same without a promise for writes nobody waits on.
 * If a batch fails, its writes are retried one by one so one bad write cannot sink the others.
 */
import type { Db } from "../store/db";

type Op = { fn: () => void; resolve?: () => void; reject?: (error: unknown) => void };

export class WriteBatcher {
  private queue: Op[] = [];
  private scheduled = false;
  /** Writes per transaction at most; a longer queue is split so one commit never stalls the loop for long. */
  private readonly maxBatch: number;
  flushes = 0;
  writes = 0;

  constructor(private readonly db: Db, private readonly onError: (error: unknown) => void, options: { maxBatch?: number } = {}) {
    this.maxBatch = options.maxBatch ?? 4000;
  }

  write(fn: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ fn, resolve, reject });
      this.schedule();
    });
  }

  fire(fn: () => void): void {
    this.queue.push({ fn });
    this.schedule();
  }

  get pending(): number {
    return this.queue.length;
  }

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Commits everything queued now (also called on shutdown). */
  flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
      this.queue = this.queue.length <= this.maxBatch ? [] : this.queue.slice(this.maxBatch);
      this.commit(batch);
    }
  }

  private commit(batch: Op[]) {
    this.flushes++;
    this.writes += batch.length;
    try {
      this.db.transaction(() => {
        for (const op of batch) op.fn();
      }).immediate();
    } catch (batchError) {
      if (batch.length === 1) return this.settle(batch[0]!, batchError);
      for (const op of batch) {
        try {
          this.db.transaction(op.fn).immediate();
          this.settle(op);
        } catch (error) {
          this.settle(op, error);
        }
      }
      return;
    }
    for (const op of batch) op.resolve?.();
  }

  private settle(op: Op, error?: unknown) {
    if (error === undefined) return op.resolve?.();
    if (op.reject) op.reject(error);
    else this.onError(error);
  }
}
