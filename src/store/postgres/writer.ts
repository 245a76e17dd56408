/**
 * The run writer on PostgreSQL, on the main thread: the client is asynchronous, so nothing here blocks the
 * event loop, and a batch costs no hand-off to another thread (the thread's wake-ups cost most on busy cores,
 * where several instances share them). Batches are compiled into one statement each (./run-batches.ts) and
 * committed two at once (./writer-lanes.ts); its callers are answered when their batch committed.
 */
import { dropSentDefinitions, encodeOp, packFinishedRuns, QueueingWriter } from "../run-writes";
import { RecordDictionaries } from "./record-dictionaries";
import { LANES, PostgresWriterLanes } from "./writer-lanes";

export class PostgresWriter extends QueueingWriter {
  /** Opened by `warm` (the engine's start) or the first batch, whichever comes first. */
  private lanes: Promise<PostgresWriterLanes> | undefined;
  private flights = 0;
  private inFlightEntries = 0;
  /** See dropSentDefinitions; forgotten when a batch fails. */
  private readonly sentDefinitions = new Set<string>();
  private readonly dictionaries = new RecordDictionaries();

  constructor(
    private readonly url: string,
    onError: (error: unknown) => void,
  ) {
    super(onError);
  }

  /**
   * Opens the writer's connections now, in the background, so the first run after start-up does not wait for
   * their handshakes (two connections, each authenticated: ~10–20 ms of the start on loopback). A failure
   * here is the first batch's to report.
   */
  warm() {
    this.lanes ??= PostgresWriterLanes.open(this.url);
    this.lanes.catch(() => {
      this.lanes = undefined;
    });
  }

  protected get inFlight() {
    return this.inFlightEntries;
  }

  protected kick() {
    if (this.flights >= LANES || this.queue.length === 0) return;
    const { entries, ops } = this.take();
    dropSentDefinitions(ops, this.sentDefinitions);
    // A run inserted finished carries its steps and cold columns in its record (one value instead of a row
    // per step); one inserted earlier keeps its step rows (packing them would first read them back).
    const wire = ops.map((group) => this.dictionaries.compress(packFinishedRuns(group.map(encodeOp), false)));
    this.flights++;
    this.inFlightEntries += entries.length;
    this.lanes ??= PostgresWriterLanes.open(this.url);
    // Batches reach the lanes in the order taken (callbacks of one promise run in order): what a batch waits
    // for is decided by its place.
    void this.lanes
      .then((lanes) => lanes.apply(wire))
      .catch((error: unknown) => wire.map(() => `the run writer could not reach PostgreSQL: ${String((error as Error)?.message ?? error)}`))
      .then((failures) => {
        this.flights--;
        this.inFlightEntries -= entries.length;
        if (failures.some((failure) => failure !== null)) this.sentDefinitions.clear();
        for (let i = 0; i < wire.length; i++) if (failures[i] === null) this.dictionaries.committed(wire[i]!);
        this.settle(entries, failures);
        this.kick();
        void this.lanes
          ?.then((lanes) => lanes.foldIfDue())
          .catch((error: unknown) => this.onError(new Error(`folding the run counts failed: ${String((error as Error)?.message ?? error)}`)));
      });
  }

  /** PostgreSQL has no write-ahead log of the kind this truncates: nothing to do once the writes are in. */
  async truncateWal(): Promise<boolean> {
    await this.drain();
    return true;
  }

  async close() {
    await this.drain();
    const lanes = await this.lanes?.catch(() => undefined);
    await lanes?.close();
  }
}
