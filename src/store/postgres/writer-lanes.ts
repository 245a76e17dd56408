/**
 * The run writer's connections to PostgreSQL (./writer.ts): batches are committed on several connections at
 * once, so one batch's commit (its WAL flush, its round trip) overlaps the next batch's work instead of the
 * instance waiting for it with the requests behind it. LANES connections open at the start; on a database
 * across a network (REMOTE_ROUND_TRIP_MS) more, up to the writer's pool (WEFT_DATABASE_POOL), open when batches
 * wait for a lane (./writer.ts).
 *
 * Batches arrive in order; a batch waits for every earlier batch still committing that it depends on, so the
 * result is that of committing them one after another:
 * - it touches a run the earlier batch touches (a run inserted there and ended here: the UPDATE would not see
 *   a row that is not committed yet; a step of that run; a run deleted there);
 * - it inserts a run whose definition the earlier batch stores (the writer sends each definition once);
 * - either prunes definitions.
 * Batches of different runs do not wait: the run counts they add to are rows of their own transaction
 * (migration 15), so nothing else is shared.
 */
// Bun.SQL at the call: naming it at the top would load the client in every process, SQLite ones included.
import type { SQL } from "bun";
import { RUN_COLUMNS } from "../run-rows";
import type { WireOp } from "../run-writes";
import type { Failure } from "../storage-errors";
import { PostgresRunBatches, type RunColumnTypes } from "./run-batches";
import { CONNECTION_NAMES } from "./connection";
import type { Statement } from "./transaction";

/** Connections the writer opens at the start and keeps batches in flight on however fast the database answers. */
export const LANES = 2;
/**
 * A round trip from which on the database counts as across a network. On the same machine one takes 0.05–0.3
 * ms; to another host in the same rack 0.3–0.5, another rack or zone 1–2.
 */
export const REMOTE_ROUND_TRIP_MS = 0.5;

/** The shortest of three `SELECT 1` round trips on `sql`, ms (the first may pay for preparing the statement). */
async function roundTripMs(sql: SQL): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await sql.unsafe("SELECT 1");
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

/** How often the counts' changes are folded. */
const FOLD_EVERY_MS = 1_000;
const DEFINITION = RUN_COLUMNS.indexOf("definition_hash");

/** What a batch touches, to tell which earlier batches it must wait for. */
interface Footprint {
  runs: Set<string>;
  /** Definitions it stores. */
  stores: Set<string>;
  /** Definitions its inserted runs use. */
  uses: Set<string>;
  /** It prunes definitions: it waits for all, and all after it wait. */
  prunes: boolean;
}

function footprint(groups: WireOp[][]): Footprint {
  const out: Footprint = { runs: new Set(), stores: new Set(), uses: new Set(), prunes: false };
  for (const group of groups) {
    for (const op of group) {
      switch (op[0]) {
        case 0:
        case 10:
          out.runs.add(String(op[1][0]));
          out.uses.add(String(op[1][DEFINITION]));
          break;
        case 1:
          out.runs.add(String(op[1][1]));
          break;
        case 2:
          out.runs.add(op[1].run_id);
          break;
        case 3:
          out.runs.add(op[1]);
          break;
        case 4:
          out.stores.add(op[1]);
          break;
        case 5:
          out.prunes = true;
          break;
        case 6:
          for (const id of op[1]) out.runs.add(id);
          break;
        case 12:
          out.runs.add(op[1]);
          break;
      }
    }
  }
  return out;
}

const meets = (a: Set<string>, b: Set<string>) => {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const x of small) if (large.has(x)) return true;
  return false;
};

/** Must `later` wait for `earlier`? */
const dependsOn = (later: Footprint, earlier: Footprint) =>
  later.prunes || earlier.prunes || meets(later.runs, earlier.runs) || meets(later.uses, earlier.stores);

interface Flight {
  footprint: Footprint;
  done: Promise<void>;
}

/** Where batches are committed before the writer's own connections are open (PostgresWriterLanes.open). */
export interface EarlyLane {
  /** Commits batches until a lane is open (the storage port's pool, already connected at start-up). */
  commit?: (statements: Statement[]) => Promise<void>;
  connectAfterMs?: number;
  /** Told when none of the lanes could open (the store's connection then goes on committing). */
  noLane?: (error: unknown) => void;
  /** Connections the writer may open in all (at least 1; default LANES). */
  pool?: number;
}

export class PostgresWriterLanes {
  private readonly free: PostgresRunBatches[] = [];
  private readonly waitingForLane: Array<(lane: PostgresRunBatches) => void> = [];
  private readonly flights = new Set<Flight>();
  /** Every lane opened (closed too, once open). */
  private readonly lanes: PostgresRunBatches[] = [];
  /** The lanes' connections opening or opened (each settles once joined or failed). */
  private readonly opening: Array<Promise<void>> = [];
  /** Connections opening now. */
  private connecting = 0;
  /** A connection beyond the first lanes failed to open: no more are tried. */
  private refused = false;
  /** The shortest round trip measured on a lane as it opened, ms. */
  private roundTrip = Number.POSITIVE_INFINITY;

  /**
   * The database is across a network: a round trip takes REMOTE_ROUND_TRIP_MS or more. Only then does the
   * writer keep more than LANES batches in flight (./writer.ts).
   */
  get remote(): boolean {
    return this.roundTrip !== Number.POSITIVE_INFINITY && this.roundTrip >= REMOTE_ROUND_TRIP_MS;
  }

  private heard(ms: number) {
    this.roundTrip = Math.min(this.roundTrip, ms);
  }
  private closed = false;
  /** Ends the wait before connecting (see open). */
  private stopWaiting = () => {};
  /** Free to take: the early lane (see open), while no lane of the writer's own is open yet. */
  private earlyFree: boolean;

  private constructor(
    private readonly early: PostgresRunBatches | null,
    private readonly connect: () => Promise<PostgresRunBatches>,
    readonly pool: number,
  ) {
    this.earlyFree = early !== null;
  }

  /**
   * Starts connecting LANES connections side by side (each handshake is a few round trips and an
   * authentication, done on this thread when it is idle) and resolves once batches can be committed: at once
   * with `commit` (the storage port's pool commits them, one at a time, until the first lane is open — a
   * start's first runs do not wait for the handshakes, which wait for the start to end), else once the first
   * lane is open. Lanes join as they open; one that cannot open is left out. Rejects, without `commit`, when
   * none opens (with the first lane's error); with it the pool goes on committing, and `noLane` is told why.
   * `connectAfterMs` (with `commit`) puts off connecting: see PostgresWriter.
   */
  static open(url: string, types: RunColumnTypes, options: EarlyLane = {}): Promise<PostgresWriterLanes> {
    const { commit, connectAfterMs = 0, noLane } = options;
    const pool = Math.max(1, options.pool ?? LANES);
    const connect = async () => {
      const sql = new Bun.SQL(url, { adapter: "postgres", max: 1, idleTimeout: 0, connection: { application_name: CONNECTION_NAMES.writer } });
      try {
        await sql.connect();
        writer.heard(await roundTripMs(sql));
      } catch (error) {
        await sql.close().catch(() => {});
        throw error;
      }
      return PostgresRunBatches.on(sql, types);
    };
    const writer = new PostgresWriterLanes(commit ? new PostgresRunBatches(commit, types) : null, connect, pool);
    // Closing ends the wait (and then connects nothing).
    const due = new Promise<void>((resolve) => {
      const timer = connectAfterMs > 0 ? setTimeout(resolve, connectAfterMs) : undefined;
      timer?.unref(); // a process ending meanwhile needs no connection
      if (!timer) resolve();
      writer.stopWaiting = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    const attempts = Array.from({ length: Math.min(LANES, pool) }, async () => {
      await due;
      if (writer.closed) throw new Error("closed before connecting");
      return connect();
    });
    for (const attempt of attempts) writer.track(attempt);
    if (commit) {
      void Promise.any(attempts).catch((error: AggregateError) => {
        if (!writer.closed) noLane?.(error.errors[0]);
      });
      return Promise.resolve(writer);
    }
    return Promise.any(attempts).then(
      () => writer,
      (error: AggregateError) => {
        throw error.errors[0];
      },
    );
  }

  /** A connection opening: it joins the lanes once open; one that cannot open is left out. */
  private track(attempt: Promise<PostgresRunBatches>) {
    const opening = attempt.then(
      (lane) => this.joined(lane),
      () => {},
    );
    this.opening.push(opening);
    this.connecting++;
    void opening.finally(() => this.connecting--);
  }

  /**
   * One more connection when batches wait for a lane, the database is across a network and the pool has room:
   * a database far away keeps each batch out for its round trip, and the batches behind it should not wait for
   * that too. Not while the first lanes have yet to open (the start), nor after one failed to open (the server
   * refuses more). On the same machine more lanes only make smaller batches: each a transaction and a WAL
   * flush of its own (at 50 connections, half the requests a second with eight lanes than with two).
   */
  private grow() {
    if (!this.remote || this.closed || this.refused || this.lanes.length === 0 || this.connecting > 0 || this.lanes.length >= this.pool) return;
    this.track(
      this.connect().catch((error: unknown) => {
        this.refused = true;
        throw error;
      }),
    );
  }

  private joined(lane: PostgresRunBatches): Promise<void> | void {
    this.lanes.push(lane);
    if (this.closed) return lane.close();
    this.earlyFree = false;
    this.release(lane);
  }

  /**
   * Commits a batch (as PostgresRunBatches.apply) once the earlier batches it depends on are committed. Call
   * in the order the batches came: what it waits for is decided before its first await.
   */
  async apply(groups: WireOp[][]): Promise<Array<Failure | null>> {
    const print = footprint(groups);
    const before = [...this.flights].filter((flight) => dependsOn(print, flight.footprint)).map((flight) => flight.done);
    let finished!: () => void;
    const flight: Flight = { footprint: print, done: new Promise((resolve) => (finished = resolve)) };
    this.flights.add(flight);
    try {
      await Promise.all(before);
      const lane = await this.lane();
      try {
        return await lane.apply(groups);
      } finally {
        this.release(lane);
      }
    } finally {
      this.flights.delete(flight);
      finished();
    }
  }

  private lastFold = Date.now();

  /**
   * Folds the run counts' changes (PostgresRunBatches.fold) once a second at most, on whichever lane is free
   * first: called after batches, so the rows a count sums stay few.
   */
  async foldIfDue(now = Date.now()): Promise<void> {
    if (now - this.lastFold < FOLD_EVERY_MS || this.lanes.length === 0) return;
    this.lastFold = now;
    const lane = await this.lane();
    try {
      await lane.fold();
    } finally {
      this.release(lane);
    }
  }

  /** Closes the connections once the batches given are committed. */
  async close(): Promise<void> {
    await Promise.all([...this.flights].map((flight) => flight.done));
    // A lane still connecting closes as soon as it is open; one not connecting yet never does.
    this.closed = true;
    this.stopWaiting();
    await Promise.all(this.lanes.map((lane) => lane.close()));
    await Promise.all(this.opening);
  }

  private lane(): Promise<PostgresRunBatches> {
    const lane = this.free.pop();
    if (lane) return Promise.resolve(lane);
    if (this.earlyFree) {
      this.earlyFree = false;
      return Promise.resolve(this.early!);
    }
    this.grow();
    return new Promise((resolve) => this.waitingForLane.push(resolve));
  }

  private release(lane: PostgresRunBatches) {
    if (lane === this.early) {
      // Used only until a lane of the writer's own is open (or none can open).
      if (this.lanes.length > 0) return;
      const next = this.waitingForLane.shift();
      if (next) next(lane);
      else this.earlyFree = true;
      return;
    }
    const next = this.waitingForLane.shift();
    if (next) next(lane);
    else this.free.push(lane);
  }
}
