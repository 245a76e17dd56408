/**
 * The run writer on PostgreSQL, on the main thread: the client is asynchronous, so nothing here blocks the
 * event loop, and a batch costs no hand-off to another thread (the thread's wake-ups cost most on busy cores,
 * where several instances share them). Batches are compiled into one statement each (./run-batches.ts) and
 * committed several at once (./writer-lanes.ts); its callers are answered when their batch committed.
 *
 * How many at once: LANES on a database on the same machine — the writes that wait meanwhile go out together
 * in the next batch, the fewest transactions (and WAL flushes) for the database to commit. On a database
 * across a network (the lanes measure its round trip as they open: writer-lanes.ts, REMOTE_ROUND_TRIP_MS),
 * each batch is out for a round trip of 0.5–5 ms besides its commit: once the oldest waiting write has waited
 * LANE_WAIT_MS, another batch goes out on another connection, up to the pool (WEFT_DATABASE_POOL), so a write
 * waits for its own round trip and not also for the batches ahead of it.
 */
import { dropSentDefinitions, encodeOp, packFinishedRuns, QueueingWriter } from "../run-writes";
import { failureOf } from "../storage-errors";
import { RecordDictionaries } from "./record-dictionaries";
import { runColumnTypes } from "./run-batches";
import type { SQL } from "bun";
import type { PostgresHandle } from "./handle";
import { commitStatements } from "./transaction";
import { LANES, PostgresWriterLanes } from "./writer-lanes";

/** How long after its first use (warm or a batch) the writer's own connections start connecting. */
export const CONNECT_AFTER_MS = 1_000;
/**
 * How long a write waits for one of the first LANES batches to come back before another batch takes it, on a
 * database across a network (docs/scaling.md, "A database across a network").
 */
export const LANE_WAIT_MS = 1;
/** Connections the writer commits on at most by default (WEFT_DATABASE_POOL). */
export const DEFAULT_POOL = 8;

export class PostgresWriter extends QueueingWriter {
  /** Opened by `warm` (the engine's start) or the first batch, whichever comes first. */
  private lanes: Promise<PostgresWriterLanes> | undefined;
  private flights = 0;
  private inFlightEntries = 0;
  /** See dropSentDefinitions; forgotten when a batch fails. */
  private readonly sentDefinitions = new Set<string>();
  private readonly dictionaries = new RecordDictionaries();
  /** When the oldest write in the queue was first seen waiting (performance.now()); undefined while none waits. */
  private waitingSince: number | undefined;
  private waitTimer: ReturnType<typeof setTimeout> | undefined;
  /** The lanes once open (whether the database is across a network is theirs to tell). */
  private opened: PostgresWriterLanes | undefined;

  /**
   * `db`: the store (its layout keeps the names' keys); `storagePool`: the storage port's pool, which commits
   * until a lane is open.
   */
  constructor(
    private readonly db: PostgresHandle,
    private readonly storagePool: SQL,
    onError: (error: unknown) => void,
    private readonly pool = DEFAULT_POOL,
  ) {
    super(onError);
  }

  /** Gets ready for the first batch (the engine's start, when a workflow is live). */
  warm() {
    void this.open().catch(() => {});
  }

  /**
   * The lanes: batches are committed on the store's connection until the first of the writer's own
   * connections is open (writer-lanes.ts), and those start connecting CONNECT_AFTER_MS later. Each
   * authentication takes this thread ~6 ms of CPU (SCRAM's 4,096 rounds), done whenever it is idle — at start,
   * while the first webhook waits for its commit, which it held up by ~20 ms.
   */
  private open(): Promise<PostgresWriterLanes> {
    if (!this.lanes) {
      const lanes = PostgresWriterLanes.open(this.db.url, runColumnTypes(this.storagePool), {
        commit: async (statements) => {
          // One connection of the pool for the transaction's statements, sent without waiting in between.
          const connection = await this.storagePool.reserve();
          try {
            await commitStatements(connection, statements);
          } finally {
            connection.release();
          }
        },
        connectAfterMs: CONNECT_AFTER_MS,
        pool: this.pool,
        noLane: (error) =>
          this.onError(
            new Error(
              `the run writer's own connections could not open (${String((error as Error)?.message ?? error)}); it commits on the store's connection, one batch at a time, until a restart`,
            ),
          ),
      });
      this.lanes = lanes;
      lanes.then(
        (open) => {
          this.opened = open;
        },
        () => {
          if (this.lanes === lanes) this.lanes = undefined;
        },
      );
    }
    return this.lanes;
  }

  protected get inFlight() {
    return this.inFlightEntries;
  }

  protected kick() {
    if (this.queue.length === 0) {
      this.waitingSince = undefined;
      return;
    }
    const first = Math.min(LANES, this.pool);
    if (this.flights >= (this.opened?.remote ? Math.max(first, this.pool) : first)) return;
    if (this.flights >= first) {
      const now = performance.now();
      this.waitingSince ??= now;
      const left = this.waitingSince + LANE_WAIT_MS - now;
      if (left > 0) {
        this.waitTimer ??= setTimeout(() => {
          this.waitTimer = undefined;
          this.kick();
        }, left);
        return;
      }
    }
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    const { entries, ops } = this.take();
    this.waitingSince = this.queue.length > 0 ? performance.now() : undefined;
    dropSentDefinitions(ops, this.sentDefinitions);
    // A run inserted finished carries its steps and cold columns in its record (one value instead of a row
    // per step); one inserted earlier keeps its step rows (packing them would first read them back).
    const wire = ops.map((group) => this.dictionaries.compress(packFinishedRuns(group.map(encodeOp), false)));
    this.flights++;
    this.inFlightEntries += entries.length;
    // Batches reach the lanes in the order taken (callbacks of one promise run in order): what a batch waits
    // for is decided by its place. Opening the lanes may throw (the server is gone): the batch fails.
    void Promise.try(() => this.open())
      .then((lanes) => lanes.apply(wire))
      .catch((error: unknown) => wire.map(() => failureOf(error, "the run writer could not reach PostgreSQL: ")))
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
