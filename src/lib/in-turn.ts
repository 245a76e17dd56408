/**
 * Work that runs one at a time, each after the one before has settled (a timer's tick that must not overlap
 * the previous one). `run` answers the work's own promise; `idle` settles once nothing is under way.
 */
export class InTurn {
  private last: Promise<unknown> | undefined;

  run<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.last;
    const turn = (async () => {
      if (previous) await previous.catch(() => undefined);
      return work();
    })();
    this.last = turn;
    const done = () => {
      if (this.last === turn) this.last = undefined;
    };
    // Only the bookkeeping: the caller has `turn` and learns of its failure.
    void turn.then(done, done);
    return turn;
  }

  /** Settles once the work under way (if any) has, whatever its outcome. */
  async idle(): Promise<void> {
    await this.last?.catch(() => undefined);
  }
}
