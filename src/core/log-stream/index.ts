/**
 * Log streaming (docs/operations.md, "Log streaming"): run and audit events sent, besides the JSON log on
 * stdout, to syslog (WEFT_LOG_SYSLOG) and to an HTTP endpoint (WEFT_LOG_HTTP_URL). The engine tells it of
 * runs as an EngineObserver; the audit log (../audit.ts) forwards every action it records through `emit`.
 *
 *   const stream = createLogStream(config.logStream, { log });
 *   stream.emit("workflow.published", { workspaceId, workflowId, version: 3 });
 *   await stream.close();   // at shutdown: sends what is queued, within a few seconds
 */
import type { LogStreamConfig } from "../../config";
import type { EngineObserver, ObservedRun } from "../../engine/engine-observer";
import type { Logger } from "../../http/logger";
import type { LifecycleHooks } from "../workflows/hooks";
import type { Destination, DestinationStats, EventSink, Severity, StreamEvent } from "./events";
import { HttpDestination } from "./http-batch";
import { SyslogDestination } from "./syslog";

export type { EventSink, Severity, StreamEvent } from "./events";

/** Longest a shutdown waits for queued events to go out, ms. */
const CLOSE_WAIT_MS = 5_000;

export function createLogStream(config: LogStreamConfig, options: { log: Logger; hostname?: string }): LogStream {
  const destinations: Destination[] = [];
  if (config.syslog) {
    destinations.push(
      new SyslogDestination({
        ...config.syslog,
        facility: config.syslogFacility,
        queue: config.queue,
        caFile: config.syslogCaFile,
        log: options.log,
        hostname: options.hostname,
      }),
    );
  }
  if (config.httpUrl) {
    destinations.push(
      new HttpDestination({ url: config.httpUrl, headers: config.httpHeaders, batch: config.httpBatch, queue: config.queue, log: options.log }),
    );
  }
  for (const destination of destinations) options.log.info("log streaming: run and audit events are sent", { destination: destination.name });
  return new LogStream(destinations);
}

export class LogStream implements EventSink, EngineObserver {
  constructor(private readonly destinations: Destination[]) {}

  /** Some destination is configured (else emit does nothing, and the engine need not tell it of runs). */
  get active(): boolean {
    return this.destinations.length > 0;
  }

  get stats(): Record<string, DestinationStats> {
    return Object.fromEntries(this.destinations.map((d) => [d.name, d.stats]));
  }

  emit(type: string, fields: Record<string, unknown>, severity: Severity = "info"): void {
    if (this.destinations.length === 0) return;
    const event: StreamEvent = { ...fields, type, time: new Date().toISOString(), severity };
    for (const destination of this.destinations) destination.send(event);
  }

  runStarted(run: ObservedRun): void {
    this.emit("run.started", runFields(run));
  }

  runFinished(run: ObservedRun): void {
    const fields = { ...runFields(run), status: run.status, durationMs: run.duration_ms, error: run.error_message };
    this.emit("run.finished", fields, run.status === "failed" ? "warning" : "info");
  }

  stepFinished(): void {}

  batchCommitted(): void {}

  /**
   * The workflows' lifecycle as events (registered in deps.lifecycleHooks). Publishing and unpublishing are
   * told by the audit log (src/core/audit.ts), which forwards them here with who did it.
   */
  lifecycleHooks(): LifecycleHooks {
    return {
      onWebhookRotated: (workflow) =>
        this.emit("workflow.webhook_rotated", { workspaceId: workflow.workspaceId, workflowId: workflow.id, workflowName: workflow.name }),
    };
  }

  /** Resolves once what is queued now was sent (tests; the HTTP endpoint's retries included). */
  async flush(): Promise<void> {
    await Promise.all(this.destinations.map((d) => d.flush()));
  }

  /** Sends what is queued, waiting at most `waitMs`, then closes every connection. */
  async close(waitMs = CLOSE_WAIT_MS): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.flush(), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    await Promise.all(this.destinations.map((d) => d.close()));
  }
}

function runFields(run: ObservedRun): Record<string, unknown> {
  return {
    runId: run.id,
    workspaceId: run.workspace_id,
    workflowId: run.workflow_id,
    workflowName: run.workflow_name,
    version: run.executed_version_number ?? run.version_number,
    environment: run.environment,
    triggerType: run.trigger_type,
    parentRunId: run.parent_run_id,
  };
}
