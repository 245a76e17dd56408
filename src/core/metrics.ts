/**
 * Weft's Prometheus metrics, served by GET /metrics (docs/operations.md, "Metrics"). Counters and histograms
 * move as things happen: the engine (runs, steps and its run writer's commits), the scheduler and the webhook
 * routes each tell this object through a small observer interface of their own, wired in src/app.ts. Gauges
 * are read from their owners when Prometheus scrapes. Nothing here reads the database, so a scrape costs the
 * same with ten stored runs or ten million.
 *
 *   const metrics = new Metrics({ workflowLabels: 0, version: "1.0.0", gauges });
 *   metrics.runStarted(row);                 // the engine, through EngineObserver
 *   const text = await metrics.scrape();     // Prometheus' text format (metrics.contentType)
 */
import type * as PromClient from "prom-client";
import type { EngineObserver, ObservedRun, ObservedStep } from "../engine/engine-observer";
import type { ScheduleObserver } from "./triggers/scheduler";

/*
 * prom-client's index also loads its default process metrics and, through them, @opentelemetry/api: bundled as
 * in the binary, ~100 ms of CPU at every start against ~15 ms for the four classes Weft uses (nproc=2), for
 * series nobody reads before the first scrape. So the classes are loaded alone, the defaults by scrape().
 */
const Registry = require("prom-client/lib/registry") as typeof PromClient.Registry;
const Counter = require("prom-client/lib/counter") as typeof PromClient.Counter;
const Gauge = require("prom-client/lib/gauge") as typeof PromClient.Gauge;
const Histogram = require("prom-client/lib/histogram") as typeof PromClient.Histogram;
type Counter = PromClient.Counter;
type Histogram = PromClient.Histogram;

/** What the gauges read at scrape time, from the parts that own it. */
export interface MetricsGauges {
  /** Runs waiting in the engine's queue, and runs executing now. */
  runs(): { queued: number; running: number };
  /** Sandbox processes of the server's thread (where code steps run), those running a call, and calls waiting for one. */
  sandbox(): { processes: number; busy: number; queued: number };
  /** Piece host processes running (one per installed Activepieces package in use). */
  pieceHosts(): number;
  /** Events log streaming dropped since the start, by destination (docs/operations.md, "Log streaming"); none configured: {}. */
  logStreamDropped(): Record<string, number>;
}

export interface MetricsOptions {
  /** WEFT_METRICS_WORKFLOW_LABELS: how many workflows get a `workflow` label of their own on the run counters; 0: none. */
  workflowLabels: number;
  /** This build's version, on weft_build_info. */
  version: string;
  gauges: MetricsGauges;
}

/** prom-client's default metrics that Weft leaves out (see scrape()). */
const HEAP_SPACE_METRICS = ["nodejs_heap_space_size_total_bytes", "nodejs_heap_space_size_used_bytes", "nodejs_heap_space_size_available_bytes"];

/** The `workflow` label of the runs of every workflow past the WEFT_METRICS_WORKFLOW_LABELS bound. */
export const OTHER_WORKFLOWS = "other";

/** Seconds: a pure step takes microseconds, an HTTP call up to minutes. */
const STEP_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120];
/** Seconds: an asynchronous webhook answers in about a millisecond, a synchronous one waits for its workflow's reply. */
const WEBHOOK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Writes per batch: one at a time when idle, thousands (at most 4,000) under load. */
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 4000];
/** Seconds from taking a batch to answering its writers (the commit, and the fsync where the writer syncs). */
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
/** Seconds late: a tick fires within milliseconds; a busy or restarted server later. */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60, 300, 3600];

export class Metrics implements EngineObserver, ScheduleObserver {
  private readonly registry = new Registry();
  private readonly labelled = new Set<string>();
  private defaultsCollected = false;
  private readonly runsStarted: Counter;
  private readonly runsFinished: Counter;
  private readonly stepDuration: Histogram;
  private readonly webhookDuration: Histogram;
  private readonly batchWrites: Histogram;
  private readonly commitDuration: Histogram;
  private readonly scheduleLag: Histogram;

  constructor(private readonly o: MetricsOptions) {
    const registers = [this.registry];
    const byWorkflow = o.workflowLabels > 0 ? ["workflow"] : [];
    this.runsStarted = new Counter({
      name: "weft_runs_started_total",
      help: "Runs started (their row committed), by trigger type",
      labelNames: ["trigger_type", ...byWorkflow],
      registers,
    });
    this.runsFinished = new Counter({
      name: "weft_runs_finished_total",
      help: "Runs finished (their end committed), by status (completed, failed, cancelled) and trigger type",
      labelNames: ["status", "trigger_type", ...byWorkflow],
      registers,
    });
    this.stepDuration = new Histogram({
      name: "weft_step_duration_seconds",
      help: "Time a step took to complete or fail, by piece and action (routers and loops: piece router or loop_on_items)",
      labelNames: ["piece", "action"],
      buckets: STEP_BUCKETS,
      registers,
    });
    this.webhookDuration = new Histogram({
      name: "weft_webhook_request_duration_seconds",
      help: "Time from a webhook call's arrival to its answer, by HTTP status code",
      labelNames: ["code"],
      buckets: WEBHOOK_BUCKETS,
      registers,
    });
    this.batchWrites = new Histogram({
      name: "weft_run_writer_batch_writes",
      help: "Writes (run and step rows) committed together in one batch of the run writer",
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.commitDuration = new Histogram({
      name: "weft_run_writer_commit_duration_seconds",
      help: "Time from taking a batch of run writes to answering its writers (commit, and fsync where the writer syncs)",
      buckets: COMMIT_BUCKETS,
      registers,
    });
    this.scheduleLag = new Histogram({
      name: "weft_schedule_lag_seconds",
      help: "How late a schedule fired after its planned instant",
      buckets: LAG_BUCKETS,
      registers,
    });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    const g = o.gauges;
    gauge("weft_runs_queued", "Runs waiting in this instance's queue to be executed", () => g.runs().queued);
    gauge("weft_runs_running", "Runs executing on this instance now", () => g.runs().running);
    gauge(
      "weft_sandbox_processes",
      "Sandbox processes running code steps (WEFT_SANDBOX_ISOLATION=process, or code on the server's thread)",
      () => g.sandbox().processes,
    );
    gauge("weft_sandbox_processes_busy", "Sandbox processes running a code call now", () => g.sandbox().busy);
    gauge("weft_sandbox_queued_calls", "Code calls waiting for a free sandbox process (at most WEFT_SANDBOX_QUEUE)", () => g.sandbox().queued);
    gauge("weft_piece_host_processes", "Piece host processes running (one per installed Activepieces package in use)", g.pieceHosts);
    const counted = new Map<string, number>();
    new Counter({
      name: "weft_log_stream_dropped_total",
      help: "Run and audit events log streaming dropped (a full queue, a refused batch), by destination",
      labelNames: ["destination"],
      registers,
      collect() {
        // Counted by the destinations themselves; the counter catches up with them at each scrape.
        for (const [destination, total] of Object.entries(g.logStreamDropped())) {
          const delta = total - (counted.get(destination) ?? 0);
          if (delta > 0) this.inc({ destination }, delta);
          else if (!counted.has(destination)) this.inc({ destination }, 0);
          counted.set(destination, total);
        }
      },
    });
    new Gauge({ name: "weft_build_info", help: "Always 1; the version label names this build", labelNames: ["version"], registers }).set(
      { version: o.version },
      1,
    );
  }

  /** The Content-Type of `scrape()`'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every series in Prometheus' text format. The process metrics (CPU, memory, event loop) start with the first scrape. */
  scrape(): Promise<string> {
    if (!this.defaultsCollected) {
      this.defaultsCollected = true;
      const collectDefaultMetrics = require("prom-client/lib/defaultMetrics") as typeof PromClient.collectDefaultMetrics;
      collectDefaultMetrics({ register: this.registry });
      // V8's heap spaces: Bun's JavaScriptCore has none of them (all but one read 0), and asking walks the heap,
      // ~5 ms of CPU per scrape on a small heap, more on a large one. nodejs_heap_size_* tell the heap's size.
      for (const name of HEAP_SPACE_METRICS) this.registry.removeSingleMetric(name);
    }
    return this.registry.metrics();
  }

  runStarted(run: ObservedRun): void {
    if (this.o.workflowLabels > 0) this.runsStarted.inc({ trigger_type: run.trigger_type, workflow: this.workflowLabel(run.workflow_id) });
    else this.runsStarted.inc({ trigger_type: run.trigger_type });
  }

  runFinished(run: ObservedRun & { status: string }): void {
    if (this.o.workflowLabels > 0) this.runsFinished.inc({ status: run.status, trigger_type: run.trigger_type, workflow: this.workflowLabel(run.workflow_id) });
    else this.runsFinished.inc({ status: run.status, trigger_type: run.trigger_type });
  }

  stepFinished(step: ObservedStep): void {
    const piece = step.piece_id ?? step.node_type.toLowerCase();
    this.stepDuration.observe({ piece, action: step.action_id ?? "" }, (step.duration_ms ?? 0) / 1000);
  }

  batchCommitted(writes: number, seconds: number): void {
    this.batchWrites.observe(writes);
    this.commitDuration.observe(seconds);
  }

  scheduleFired(lateSeconds: number): void {
    this.scheduleLag.observe(lateSeconds);
  }

  /** A webhook call was answered `seconds` after it arrived (src/api/webhooks.ts). */
  webhookAnswered(status: number, seconds: number): void {
    this.webhookDuration.observe({ code: String(status) }, seconds);
  }

  /** The workflow's own label while fewer than WEFT_METRICS_WORKFLOW_LABELS workflows have one, else "other". */
  private workflowLabel(workflowId: string): string {
    if (this.labelled.has(workflowId)) return workflowId;
    if (this.labelled.size >= this.o.workflowLabels) return OTHER_WORKFLOWS;
    this.labelled.add(workflowId);
    return workflowId;
  }
}
