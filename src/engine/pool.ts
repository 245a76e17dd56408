/**
 * A fixed, long-lived pool of Bun Worker threads (`WEFT_WORKERS`) that run non-pure steps.
 * - Messages are JSON strings (src/engine/worker-protocol.ts).
 * - A worker is never terminated before it said ready (terminating a half-started worker can take the process down).
 * - Cancellation is cooperative: the step's AbortSignal fires in the worker. A worker that does not give a
 *   cancelled or overrunning step back within the grace period is stuck (a JS loop) and is replaced.
 * - A crashed worker fails the steps it held (so their runs fail with the reason) and its slot is replaced.
 */
import type { Logger } from "../http/logger";
import type { ActionOutcome } from "./invoke-action";
import type { SubflowCall, SubflowResult, WebhookReply } from "./step-context";
import type { FromWorker, StepRequest, ToWorker, WorkerInit } from "./worker-protocol";
import { threadEntry } from "../lib/thread-entry";

export interface StepHandlers {
  onReply(reply: WebhookReply): void;
  onCall(call: SubflowCall): Promise<SubflowResult>;
  onLog(message: string, fields?: Record<string, unknown>): void;
}

interface Pending {
  resolve: (outcome: ActionOutcome) => void;
  handlers: StepHandlers;
  /** Set when the step was given up on (cancel or overrun): its late answer is dropped. */
  abandoned?: ReturnType<typeof setTimeout>;
  detach?: () => void;
}

interface Slot {
  index: number;
  worker: Worker;
  ready: boolean;
  /** The worker opened and was sent its init: later changes go to it as messages. */
  opened: boolean;
  readyPromise: Promise<void>;
  pending: Map<string, Pending>;
  retiring: boolean;
}

export interface PoolOptions {
  size: number;
  init: WorkerInit;
  log: Logger;
  /** How long a worker may keep a cancelled step before it is considered stuck and replaced. */
  graceMs?: number;
  /** How long a starting worker may take to say ready. */
  startTimeoutMs?: number;
}

const WORKER_URL = threadEntry("engine/worker.ts");

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private stopping = false;
  private nextId = 0;
  /** Piece id → version the workers loaded (what the pool serves); filled by the first ready worker. */
  loaded: Record<string, string> = {};
  replaced = 0;
  stepsRun = 0;

  constructor(private readonly o: PoolOptions) {}

  async start(): Promise<void> {
    for (let i = 0; i < this.o.size; i++) this.slots.push(this.spawn(i));
    await Promise.all(this.slots.map((s) => s.readyPromise));
  }

  get size(): number {
    return this.slots.length;
  }

  get inflight(): number {
    return this.slots.reduce((n, s) => n + s.pending.size, 0);
  }

  /** Do the workers run this piece at this version? Else the engine runs the step itself. */
  serves(pieceId: string, version: string): boolean {
    return this.loaded[pieceId] === version;
  }

  private spawn(index: number): Slot {
    const worker = new Worker(WORKER_URL, { smol: true } as WorkerOptions);
    // The HTTP server keeps a serving process alive; idle workers must not keep a finished one (tests, CLI) alive.
    (worker as { unref?: () => void }).unref?.();
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    const slot: Slot = {
      index,
      worker,
      ready: false,
      opened: false,
      readyPromise: new Promise<void>((resolve, reject) => {
        markReady = resolve;
        failReady = reject;
      }),
      pending: new Map(),
      retiring: false,
    };
    slot.readyPromise.catch(() => {});
    const startTimer = setTimeout(() => failReady(new Error("worker did not become ready in time")), this.o.startTimeoutMs ?? 30_000);
    worker.addEventListener("open", () => {
      slot.opened = true;
      this.post(slot, this.o.init);
    });
    worker.addEventListener("message", (event: MessageEvent) => {
      const message = JSON.parse(event.data as string) as FromWorker;
      if (message.t === "ready") {
        clearTimeout(startTimer);
        slot.ready = true;
        if (Object.keys(this.loaded).length === 0) this.loaded = message.pieces;
        markReady();
        return;
      }
      if (message.t === "init-failed") {
        clearTimeout(startTimer);
        this.o.log.error("worker failed to load the piece registry", { worker: index, error: message.error });
        failReady(new Error(message.error));
        return;
      }
      this.onMessage(slot, message);
    });
    worker.addEventListener("error", (event: ErrorEvent) => {
      this.o.log.error("worker thread error", { worker: index, error: event.message });
      this.replace(slot, `worker thread crashed: ${crashReason(event)}`);
    });
    worker.addEventListener("close", () => {
      if (!slot.retiring && !this.stopping) this.replace(slot, "worker thread exited unexpectedly");
    });
    return slot;
  }

  private post(slot: Slot, message: ToWorker) {
    slot.worker.postMessage(JSON.stringify(message));
  }

  private onMessage(slot: Slot, message: FromWorker) {
    if (message.t === "ready" || message.t === "init-failed") return;
    const pending = slot.pending.get(message.id);
    if (!pending) return;
    switch (message.t) {
      case "done":
        slot.pending.delete(message.id);
        pending.detach?.();
        if (pending.abandoned) clearTimeout(pending.abandoned);
        else pending.resolve(message.outcome);
        return;
      case "reply":
        if (!pending.abandoned) pending.handlers.onReply(message.reply);
        return;
      case "log":
        pending.handlers.onLog(message.message, message.fields);
        return;
      case "call":
        pending.handlers.onCall(message.call).then(
          (result) => this.post(slot, { t: "call-result", id: message.id, callId: message.callId, ok: true, result }),
          (error) =>
            this.post(slot, { t: "call-result", id: message.id, callId: message.callId, ok: false, error: (error as Error)?.message ?? String(error) }),
        );
        return;
    }
  }

  /**
   * A new SSRF allow-list (Settings → Network): every worker gets it before any step sent after this call;
   * a worker not yet opened, or spawned later, gets it with its init.
   */
  setAllowCidrs(allowCidrs: readonly string[]): void {
    this.o.init = { ...this.o.init, allowCidrs: [...allowCidrs] };
    for (const slot of this.slots) if (slot.opened && !slot.retiring) this.post(slot, { t: "allow-cidrs", allowCidrs: [...allowCidrs] });
  }

  /** Fails what a dead or stuck worker held and puts a fresh worker in its slot. */
  private replace(slot: Slot, reason: string) {
    if (slot.retiring) return;
    slot.retiring = true;
    for (const [, pending] of slot.pending) {
      if (pending.abandoned) clearTimeout(pending.abandoned);
      else pending.resolve({ kind: "error", message: `${reason}; the step was stopped and the worker replaced`, effects: { tags: [] } });
    }
    slot.pending.clear();
    // Never terminate a worker before it said ready.
    slot.readyPromise.finally(() => slot.worker.terminate());
    if (this.stopping) return;
    this.replaced++;
    const fresh = this.spawn(slot.index);
    this.slots[this.slots.indexOf(slot)] = fresh;
  }

  private pick(): Slot | undefined {
    let best: Slot | undefined;
    for (const slot of this.slots) {
      if (!slot.ready || slot.retiring) continue;
      if (!best || slot.pending.size < best.pending.size) best = slot;
    }
    return best;
  }

  /**
   * Runs one step in a worker. Resolves with the action's outcome, or at once with an error outcome
   * when `signal` fires (the worker is told to cancel; if it does not let go in time it is replaced).
   */
  async run(request: Omit<StepRequest, "t" | "id">, signal: AbortSignal, handlers: StepHandlers): Promise<ActionOutcome> {
    let slot = this.pick();
    while (!slot) {
      if (this.stopping) return { kind: "error", message: "the engine is shutting down", effects: { tags: [] } };
      await Promise.race(this.slots.map((s) => s.readyPromise.catch(() => {})));
      slot = this.pick();
      if (!slot) await Bun.sleep(50);
    }
    const id = String(++this.nextId);
    this.stepsRun++;
    return new Promise<ActionOutcome>((resolve) => {
      const target = slot!;
      const pending: Pending = { resolve, handlers };
      target.pending.set(id, pending);
      const onAbort = () => {
        if (!target.pending.has(id) || pending.abandoned) return;
        this.post(target, { t: "cancel", id });
        pending.abandoned = setTimeout(() => {
          this.o.log.warn("worker did not release a cancelled step; replacing it", { worker: target.index });
          this.replace(target, "worker did not stop a cancelled step");
        }, this.o.graceMs ?? 5_000);
        resolve({ kind: "error", message: String(signal.reason ?? "stopped"), effects: { tags: [] } });
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      pending.detach = () => signal.removeEventListener("abort", onAbort);
      this.post(target, { ...request, t: "step", id });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.slots.map(async (slot) => {
        slot.retiring = true;
        await slot.readyPromise.catch(() => {});
        slot.worker.terminate();
      }),
    );
  }
}

/**
 * The reason a worker died, for the step's errorMessage: Bun's message for an uncaught error carries the
 * source excerpt and stack ("4 | ...\nerror: boom\n at ..."); the run gets the "error:" line alone (the log keeps all).
 */
function crashReason(event: ErrorEvent): string {
  const text = String(event.message ?? event.error?.message ?? "unknown error");
  const line = /^(?:\w*error): (.+)$/im.exec(text)?.[1] ?? text.split("\n").find((l) => l.trim()) ?? text;
  return line.trim().slice(0, 500);
}
