/**
 * The server's side of a piece host (./host.ts): one child process per installed package version,
 * started on first use, stopped after a while unused (so installed but idle pieces cost no memory), and
 * started again on the next call if it ended. Requests and answers go over Bun's IPC channel; the
 * piece's store calls are answered by the caller's store handler.
 */
import { fileURLToPath } from "node:url";
import { isCompiled, selfCommand } from "../../lib/self-command";
import type { ApEffects, FromHost, ToHost } from "./protocol";

/** How long a host may take to load its package and say it is ready. */
const START_TIMEOUT_MS = 30_000;

export type StoreHandler = (op: "get" | "put" | "delete", key: string, scope: "FLOW" | "COLLECTION", value?: unknown) => unknown;

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
}

interface Pending {
  resolve: (answer: HostAnswer) => void;
  reject: (error: Error) => void;
  store?: StoreHandler;
  timer?: ReturnType<typeof setTimeout>;
}

type Request = ToHost extends infer M ? (M extends { id: number } ? Omit<M, "id"> : never) : never;

export class PieceHostProcess {
  private proc: ReturnType<typeof Bun.spawn> | undefined;
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

  /** Sends one request; rejects with the piece's message when it throws, or when the host ends first. */
  async request(message: Request, options: { store?: StoreHandler; timeoutMs?: number } = {}): Promise<HostAnswer> {
    await this.start();
    const id = this.nextId++;
    this.touch();
    return new Promise<HostAnswer>((resolve, reject) => {
      const pending: Pending = { resolve, reject, store: options.store };
      if (options.timeoutMs) {
        pending.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new Error(`${this.o.packageName} did not answer within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
      }
      this.pending.set(id, pending);
      this.proc?.send({ ...message, id } as ToHost);
    });
  }

  get running(): boolean {
    return this.proc !== undefined;
  }

  stop(): void {
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
          } else this.received(message);
        },
        onExit: (_proc, code, signal) => {
          clearTimeout(timer);
          if (this.proc === proc) {
            this.proc = undefined;
            this.ready = undefined;
            this.readyNow = false;
          }
          const why = this.stderr.trim() || `exit code ${code ?? signal}`;
          reject(new Error(`${this.o.packageName}@${this.o.version} could not be loaded: ${why}`));
          for (const [id, pending] of this.pending) {
            this.pending.delete(id);
            if (pending.timer) clearTimeout(pending.timer);
            pending.reject(new Error(`the process running ${this.o.packageName} ended during the call (${why}); run the step again`));
          }
        },
      });
      this.proc = proc;
      proc.unref();
      void this.collectStderr(proc.stderr as ReadableStream<Uint8Array>);
    });
    return this.ready;
  }

  private async collectStderr(stream: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    for await (const chunk of stream) this.stderr = (this.stderr + decoder.decode(chunk)).slice(-4000);
  }

  private received(message: FromHost) {
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
      let answer: ToHost;
      try {
        if (!pending?.store) throw new Error("the store is not available here");
        answer = { t: "store-result", callId: message.callId, value: pending.store(message.op, message.key, message.scope, message.value) };
      } catch (error) {
        answer = { t: "store-result", callId: message.callId, error: (error as Error).message };
      }
      this.proc?.send(answer);
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
