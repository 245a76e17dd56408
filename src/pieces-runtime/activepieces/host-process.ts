/**
 * The server's side of a piece host (./host.ts): one child process per installed package version,
 * started on first use, stopped after a while unused (so installed but idle pieces cost no memory), and
 * started again on the next call if it ended. Requests and answers go over Bun's IPC channel; the
 * piece's store calls are answered by the caller's store handler.
 *
 * Limits: a host whose resident memory passes `memoryMb` is stopped (checked every second while it runs).
 * When a caller gives up on a call (the step's time limit, a cancelled run) the host is retired: later
 * calls go to a fresh host at once, and the retired one is stopped a second later — what it was still
 * running (a piece stuck in a loop) fails with the reason. A stopped host's calls fail with why.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isCompiled, selfCommand } from "../../lib/self-command";
import type { ApEffects, FromHost, ToHost } from "./protocol";

/** How long a host may take to load its package and say it is ready. */
const START_TIMEOUT_MS = 30_000;
/** How often a running host's memory is looked at. */
const MEMORY_CHECK_MS = 1_000;
/** How long a call whose caller gave up may still take before its host is stopped. */
const ABANDON_GRACE_MS = 1_000;

/** A process's resident memory in MiB (Linux /proc), or undefined where that cannot be read. */
function residentMiB(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export type StoreHandler = (op: "get" | "put" | "delete", key: string, scope: "FLOW" | "COLLECTION", value?: unknown) => Promise<unknown>;

export interface HostAnswer {
  value: unknown;
  effects: ApEffects;
}

export interface HostProcessOptions {
  /** The package's entry module (resolved in its install directory). */
  modulePath: string;
  packageName: string;
  version: string;
  /** The install directory: the host's working directory. */
  cwd: string;
  /** The address policy's allow-list at start; `allow` changes it while the process runs. */
  allowCidrs: readonly string[];
  /** Stop the process after this long without a request. */
  idleMs: number;
  /** Stop the process when its resident memory passes this (WEFT_PIECE_MEMORY_MB); unset: no limit. */
  memoryMb?: number;
}

type HostProc = ReturnType<typeof Bun.spawn>;

interface Pending {
  /** The process the call went to. */
  proc: HostProc;
  resolve: (answer: HostAnswer) => void;
  reject: (error: Error) => void;
  store?: StoreHandler;
  timer?: ReturnType<typeof setTimeout>;
}

type Request = ToHost extends infer M ? (M extends { id: number } ? Omit<M, "id"> : never) : never;

export class PieceHostProcess {
  private proc: HostProc | undefined;
  /** Processes given up on (a call was abandoned): stopped shortly, no new call goes to them. */
  private readonly retired = new Set<HostProc>();
  private ready: Promise<void> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private stderr = "";
  /** The process said ready: it listens to messages. */
  private readyNow = false;
  private allowCidrs: readonly string[];
  /** The allow-list the running process was started with or last sent. */
  private sentCidrs: readonly string[] = [];
  private memoryTimer: ReturnType<typeof setInterval> | undefined;
  /** Why a process was stopped on purpose (memory, a call that would not end): what the calls it ran are told. */
  private readonly stoppedBecause = new WeakMap<HostProc, string>();

  constructor(private readonly o: HostProcessOptions) {
    this.allowCidrs = o.allowCidrs;
  }

  /** A new allow-list (Settings → Network): a running host gets it before any later request; a later start uses it. */
  allow(cidrs: readonly string[]): void {
    this.allowCidrs = [...cidrs];
    if (this.proc && this.readyNow) this.sendAllowList();
  }

  private sendAllowList(): void {
    if (this.sentCidrs === this.allowCidrs) return;
    this.sentCidrs = this.allowCidrs;
    this.proc?.send({ t: "allow-cidrs", allowCidrs: [...this.allowCidrs] } satisfies ToHost);
  }

  /**
   * Sends one request; rejects with the piece's message when it throws, or when the host ends first. When
   * `signal` aborts (the step's time limit, a cancelled run) the call is given up, and a host still busy
   * with it a second later is stopped.
   */
  async request(message: Request, options: { store?: StoreHandler; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<HostAnswer> {
    options.signal?.throwIfAborted();
    await this.start();
    const id = this.nextId++;
    this.touch();
    const proc = this.proc!;
    return new Promise<HostAnswer>((resolve, reject) => {
      const { signal } = options;
      const onAbort = () => {
        if (!this.pending.has(id)) return;
        reject(signal!.reason ?? new Error("the call was cancelled"));
        this.retire(proc, `a call of ${message.t === "action" ? `action ${message.action}` : message.t} went on after its step gave up`);
      };
      // A run's signal outlives its steps: the listener goes when the call is answered.
      const settled = () => signal?.removeEventListener("abort", onAbort);
      const pending: Pending = {
        proc,
        resolve: (answer) => {
          settled();
          resolve(answer);
        },
        reject: (error) => {
          settled();
          reject(error);
        },
        store: options.store,
      };
      if (options.timeoutMs) {
        pending.timer = setTimeout(() => {
          this.pending.delete(id);
          pending.reject(new Error(`${this.o.packageName} did not answer within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, pending);
      proc.send({ ...message, id } as ToHost);
    });
  }

  /** Stops `proc` on purpose; the calls it was running fail with `reason`. */
  private halt(proc: HostProc, reason: string): void {
    this.stoppedBecause.set(proc, reason);
    proc.kill("SIGKILL");
  }

  /** Later calls go to a fresh process; `proc` is stopped after a grace, failing what it still runs. */
  private retire(proc: HostProc, reason: string): void {
    if (this.retired.has(proc)) return;
    if (this.proc === proc) {
      this.proc = undefined;
      this.ready = undefined;
      this.readyNow = false;
    }
    this.retired.add(proc);
    setTimeout(() => this.halt(proc, reason), ABANDON_GRACE_MS).unref();
  }

  private watchMemory(proc: ReturnType<typeof Bun.spawn>): void {
    const limit = this.o.memoryMb;
    if (!limit) return;
    clearInterval(this.memoryTimer);
    this.memoryTimer = setInterval(() => {
      if (this.proc !== proc) return clearInterval(this.memoryTimer);
      const used = residentMiB(proc.pid);
      if (used !== undefined && used > limit) this.halt(proc, `it used ${Math.round(used)} MiB, over the limit of ${limit} MiB (WEFT_PIECE_MEMORY_MB)`);
    }, MEMORY_CHECK_MS);
    this.memoryTimer.unref();
  }

  get running(): boolean {
    return this.proc !== undefined;
  }

  stop(): void {
    clearInterval(this.memoryTimer);
    for (const old of this.retired) old.kill("SIGKILL");
    this.retired.clear();
    this.proc?.kill("SIGKILL");
    this.proc = undefined;
    this.ready = undefined;
    this.readyNow = false;
    if (this.idleTimer) clearTimeout(this.idleTimer);
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    this.stderr = "";
    this.readyNow = false;
    this.sentCidrs = this.allowCidrs;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${this.o.packageName}@${this.o.version} did not load within ${START_TIMEOUT_MS / 1000} s`));
        this.stop();
      }, START_TIMEOUT_MS);
      // From source, the host's own entry (it loads no server code); the compiled binary runs itself.
      const command = isCompiled() ? selfCommand("__piece-host") : [process.execPath, fileURLToPath(new URL("./host-main.ts", import.meta.url))];
      const proc = Bun.spawn(command, {
        cwd: this.o.cwd,
        // The piece sees none of the server's environment: no WEFT_ secret, no other variable.
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: this.o.cwd,
          WEFT_PIECE_MODULE: this.o.modulePath,
          WEFT_PIECE_PACKAGE: this.o.packageName,
          WEFT_PIECE_VERSION: this.o.version,
          WEFT_ALLOW_CIDRS: this.allowCidrs.join(","),
        },
        stdin: "ignore",
        stdout: "ignore",
        stderr: "pipe",
        ipc: (message: FromHost) => {
          if (message.t === "ready") {
            clearTimeout(timer);
            this.readyNow = true;
            // A change made while it was loading goes first, before the requests waiting for ready.
            this.sendAllowList();
            resolve();
          } else this.received(message, proc);
        },
        onExit: (_proc, code, signal) => {
          clearTimeout(timer);
          if (this.proc === proc) {
            this.proc = undefined;
            this.ready = undefined;
            this.readyNow = false;
          }
          this.retired.delete(proc);
          const stopped = this.stoppedBecause.get(proc);
          const why = stopped ? `Weft stopped it: ${stopped}` : this.stderr.trim() || `exit code ${code ?? signal}`;
          reject(new Error(`${this.o.packageName}@${this.o.version} could not be loaded: ${why}`));
          for (const [id, pending] of this.pending) {
            if (pending.proc !== proc) continue;
            this.pending.delete(id);
            if (pending.timer) clearTimeout(pending.timer);
            pending.reject(new Error(`the process running ${this.o.packageName} ended during the call (${why}); run the step again`));
          }
        },
      });
      this.proc = proc;
      proc.unref();
      this.watchMemory(proc);
      void this.collectStderr(proc.stderr as ReadableStream<Uint8Array>);
    });
    return this.ready;
  }

  private async collectStderr(stream: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    for await (const chunk of stream) this.stderr = (this.stderr + decoder.decode(chunk)).slice(-4000);
  }

  private received(message: FromHost, proc: HostProc) {
    if (message.t === "result") {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (pending.timer) clearTimeout(pending.timer);
      this.touch();
      if (message.error !== undefined) pending.reject(new Error(message.error));
      else pending.resolve({ value: message.value, effects: message.effects ?? { tags: [] } });
    } else if (message.t === "store") {
      const pending = this.pending.get(message.id);
      const { callId } = message;
      const answered = pending?.store
        ? pending.store(message.op, message.key, message.scope, message.value)
        : Promise.reject(new Error("the store is not available here"));
      answered.then(
        (value) => proc.send({ t: "store-result", callId, value } satisfies ToHost),
        (error: unknown) => proc.send({ t: "store-result", callId, error: (error as Error)?.message ?? String(error) } satisfies ToHost),
      );
    }
  }

  /** (Re)arms the idle stop; a call in flight keeps the process. */
  private touch() {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.pending.size === 0) this.stop();
      else this.touch();
    }, this.o.idleMs);
    this.idleTimer.unref();
  }
}
