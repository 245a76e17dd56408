/**
 * OpenTelemetry traces of runs and steps (docs/operations.md, "Traces"): a span per run and per step, sent
 * by the official SDK over OTLP/HTTP (JSON) to the endpoint the standard OTEL_* variables name. The engine
 * tells it what happens through EngineObserver, like the metrics; it answers each starting step with the
 * `traceparent` of the step's span, which the step's outgoing calls carry (the http piece sends it).
 *
 *   const tracing = createTracing(config.traces, { version, log });   // undefined when no endpoint is set
 *   engineOptions.observer = observeAll(metrics, tracing);
 *   await tracing?.shutdown();                                        // sends what is still batched
 *
 * Off, nothing of the SDK is loaded: createTracing answers undefined before requiring it.
 * A run's span is opened by its first step (or its end) with the run's own start time, and ended when the
 * run ends, so its children never miss it; spans are held in memory, bounded, and a restart (or another
 * instance of a cluster finishing the run) ends the run's span as a new one of a new trace.
 */
import type * as Api from "@opentelemetry/api";
import type { Span, SpanContext, Tracer } from "@opentelemetry/api";
import type * as SdkTrace from "@opentelemetry/sdk-trace-base";
import type * as OtlpHttp from "@opentelemetry/exporter-trace-otlp-http";
import type * as Resources from "@opentelemetry/resources";
import type * as Semconv from "@opentelemetry/semantic-conventions";
import type { TracesConfig } from "../config";
import type { EngineObserver, ObservedRun, ObservedStep, StartingStep } from "../engine/engine-observer";
import type { Logger } from "../http/logger";
import { BoundedMap } from "../lib/bounded-map";
import { type Clock, systemClock } from "../lib/clock";

/** Runs whose spans are kept open at most; past it the oldest are forgotten (never sent). */
const OPEN_RUNS = 20_000;

/** A run's open span and its steps' open spans (by step id). */
interface OpenRun {
  span: Span;
  steps: Map<string, Span>;
}

export interface TracingOptions {
  /** This build's version: `service.version`. */
  version: string;
  log: Logger;
  /** When a span ends that the run's rows do not date (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
}

/** The tracer when an OTLP endpoint is configured, else undefined (and the SDK stays unloaded). */
export function createTracing(config: TracesConfig, options: TracingOptions): Tracing | undefined {
  if (!config.endpoint) return undefined;
  return new Tracing(config.endpoint, config.serviceName, options);
}

export class Tracing implements EngineObserver {
  private readonly api: typeof Api;
  private readonly provider: SdkTrace.BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly runs = new BoundedMap<string, OpenRun>(OPEN_RUNS);
  private readonly clock: Clock;

  constructor(endpoint: string, serviceName: string, options: TracingOptions) {
    this.clock = options.clock ?? systemClock;
    this.api = require("@opentelemetry/api") as typeof Api;
    const sdk = require("@opentelemetry/sdk-trace-base") as typeof SdkTrace;
    const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-http") as typeof OtlpHttp;
    const { resourceFromAttributes } = require("@opentelemetry/resources") as typeof Resources;
    const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = require("@opentelemetry/semantic-conventions") as typeof Semconv;
    // OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, OTEL_BSP_* and OTEL_TRACES_SAMPLER are read by the SDK itself.
    const exporter = new OTLPTraceExporter({ url: endpoint });
    this.provider = new sdk.BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, [ATTR_SERVICE_VERSION]: options.version }),
      spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
    });
    this.tracer = this.provider.getTracer("weft", options.version);
    options.log.info("traces are sent over OTLP/HTTP", { endpoint, serviceName });
  }

  runStarted(): void {
    // A run's span opens with its first step, or its end (a run's start is told after its commit, which can
    // come after its first steps); its start time is the run's own.
  }

  stepStarting(step: StartingStep, run: ObservedRun, traceparent?: string): string | undefined {
    const open = this.openRun(run, traceparent);
    let span = open.steps.get(step.id);
    if (!span) {
      span = this.tracer.startSpan(
        `step ${step.name}`,
        {
          attributes: {
            ...this.runAttributes(run),
            "weft.step.id": step.id,
            "weft.step.name": step.name,
            "weft.piece": step.pieceId,
            "weft.action": step.actionId,
          },
        },
        this.api.trace.setSpan(this.api.ROOT_CONTEXT, open.span),
      );
      open.steps.set(step.id, span);
    }
    return traceparentOf(span.spanContext());
  }

  stepFinished(step: ObservedStep, run: ObservedRun, traceparent?: string): void {
    const open = this.openRun(run, traceparent);
    let span = open.steps.get(step.id);
    const endTime = this.clock.now();
    if (span) open.steps.delete(step.id);
    else {
      // A step that ran without being handed to an action here (a router, a loop, an expression that failed),
      // or whose span a restart lost: its span is written now, with its own start.
      const startTime = step.started_at ? Date.parse(step.started_at) : endTime - (step.duration_ms ?? 0);
      span = this.tracer.startSpan(
        `step ${step.node_id}`,
        { startTime, attributes: { ...this.runAttributes(run), "weft.step.id": step.id, "weft.step.name": step.node_id } },
        this.api.trace.setSpan(this.api.ROOT_CONTEXT, open.span),
      );
    }
    span.setAttributes({
      "weft.piece": step.piece_id ?? step.node_type.toLowerCase(),
      "weft.action": step.action_id ?? "",
      "weft.step.status": step.status,
    });
    this.setOutcome(span, step.status, step.error_message);
    span.end(endTime);
  }

  runFinished(run: ObservedRun, traceparent?: string): void {
    const { span, steps } = this.openRun(run, traceparent);
    this.runs.delete(run.id);
    const endTime = run.finished_at ? Math.max(Date.parse(run.finished_at), Date.parse(run.started_at)) : this.clock.now();
    // Steps the run's end cut short (a cancel, a time limit) are not told as finished: they end with it.
    for (const step of steps.values()) {
      step.setAttribute("weft.step.status", run.status === "completed" ? "unfinished" : run.status);
      this.setOutcome(step, run.status, run.error_message);
      step.end(endTime);
    }
    span.setAttribute("weft.run.status", run.status);
    this.setOutcome(span, run.status, run.error_message);
    span.end(endTime);
  }

  batchCommitted(): void {}

  /** Sends every ended span now (tests, and before a shutdown). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  /** Sends what is batched and stops the exporter. */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }

  /** The run's open span and steps, else a new span from the run's start, a child of the caller's context. */
  private openRun(run: ObservedRun, traceparent: string | undefined): OpenRun {
    const known = this.runs.get(run.id);
    if (known) return known;
    const api = this.api;
    const parent = parseTraceparent(traceparent);
    const context = parent ? api.trace.setSpanContext(api.ROOT_CONTEXT, parent) : api.ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      `run ${run.workflow_name}`,
      { startTime: Date.parse(run.started_at), kind: parent ? api.SpanKind.SERVER : api.SpanKind.INTERNAL, attributes: this.runAttributes(run) },
      context,
    );
    span.setAttributes({ "weft.run.trigger_type": run.trigger_type, "weft.run.environment": run.environment });
    if (run.parent_run_id) span.setAttribute("weft.run.parent_id", run.parent_run_id);
    const open = { span, steps: new Map<string, Span>() };
    this.runs.set(run.id, open);
    return open;
  }

  private runAttributes(run: ObservedRun): Api.Attributes {
    const version = run.executed_version_number ?? run.version_number;
    const attributes: Api.Attributes = { "weft.run.id": run.id, "weft.workflow.id": run.workflow_id, "weft.workflow.name": run.workflow_name };
    if (version !== null) attributes["weft.workflow.version"] = version;
    return attributes;
  }

  private setOutcome(span: Span, status: string, error: string | null): void {
    if (status === "failed" || (status === "cancelled" && error !== null)) {
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error ?? status });
      if (error !== null) span.setAttribute("weft.error", error);
    } else if (status === "completed") span.setStatus({ code: this.api.SpanStatusCode.OK });
  }
}

/** A valid `traceparent` (src/lib/traceparent.ts checked it) as the API's remote span context. */
function parseTraceparent(traceparent: string | undefined): SpanContext | undefined {
  if (!traceparent) return undefined;
  const [, traceId, spanId, flags] = traceparent.split("-");
  if (!traceId || !spanId || !flags) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & 1, isRemote: true };
}

/** W3C `traceparent` of a span: version 00, its trace and span ids, its sampled flag. */
function traceparentOf(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-0${context.traceFlags & 1}`;
}
