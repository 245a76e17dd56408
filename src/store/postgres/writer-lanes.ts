/**
 * The run writer's connections to PostgreSQL (./writer.ts): batches are committed
 * on LANES connections at once, so one batch's commit (its WAL flush, its round trip) overlaps the next
 * batch's work instead of the instance waiting for it with the requests behind it.
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
import { RUN_COLUMNS } from "../runs";
import type { WireOp } from "../run-writes";
import { PostgresRunBatches } from "./run-batches";

/** Connections the writer commits on (the writer keeps as many batches in flight). */
export const LANES = 2;
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

export class PostgresWriterLanes {
  private readonly free: PostgresRunBatches[];
  private readonly waitingForLane: Array<(lane: PostgresRunBatches) => void> = [];
  private readonly flights = new Set<Flight>();

  private constructor(private readonly lanes: PostgresRunBatches[]) {
    this.free = [...lanes];
  }

  static async open(url: string): Promise<PostgresWriterLanes> {
    // Connected side by side: each connection's handshake is a few round trips and an authentication.
    const opened = await Promise.allSettled(
      Array.from({ length: LANES }, () => PostgresRunBatches.open(new Bun.SQL(url, { adapter: "postgres", max: 1, idleTimeout: 0 }))),
    );
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === "rejected");
    const lanes = opened.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    if (failed) {
      for (const lane of lanes) await lane.close().catch(() => {});
      throw failed.reason;
    }
    return new PostgresWriterLanes(lanes);
  }

  /**
   * Commits a batch (as PostgresRunBatches.apply) once the earlier batches it depends on are committed. Call
   * in the order the batches came: what it waits for is decided before its first await.
   */
  async apply(groups: WireOp[][]): Promise<Array<string | null>> {
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
    if (now - this.lastFold < FOLD_EVERY_MS) return;
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
    await Promise.all(this.lanes.map((lane) => lane.close()));
  }

  private lane(): Promise<PostgresRunBatches> {
    const lane = this.free.pop();
    if (lane) return Promise.resolve(lane);
    return new Promise((resolve) => this.waitingForLane.push(resolve));
  }

  private release(lane: PostgresRunBatches) {
    const next = this.waitingForLane.shift();
    if (next) next(lane);
    else this.free.push(lane);
  }
}
