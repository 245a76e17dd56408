/**
 * The hard backstop: calls run in `weft __sandbox` child processes (./child.ts), and a process whose
 * call overruns its time limit by KILL_GRACE_MS is SIGKILLed and replaced. This stops what the
 * interrupt handler cannot (a single built-in that loops for minutes) and never blocks the calling
 * thread. Each calling thread (the server, each engine worker) keeps its own small pool; processes
 * start on first use and carry no secrets (a minimal environment). A process whose call runs past
 * SLOW_CALL_MS and then computes SLOW_CALL_MS more of CPU time is lowered to SANDBOX_NICE for good, so code
 * that computes leaves the cores to the server first; quick code, which the server's own requests wait on,
 * keeps the server's priority even when a loaded machine makes it wait past SLOW_CALL_MS. A process idle for
 * `processIdleMs` is stopped, all but one.
 *
 * Time: inside the process a call's limit counts its CPU time, so a call that shares a core with other
 * sandbox processes is not stopped for waiting. The kill timer here is the backstop for a call that does
 * not stop itself; on Linux it reads the process's CPU time (/proc) and kills only a call that has computed
 * past its limit + KILL_GRACE_MS — however long it waited for a core — or one whose process computed nothing
 * at all for STALLED_MS. Where that cannot be read, it kills on wall-clock time, allowing the call its share
 * of the cores: (limit + grace) × 2 × max(1, processes / cores).
 *
 * Fairness: a process runs one call at a time and replies the moment it ends. A call's kill timer is
 * armed when it becomes the call the process runs (the head), so its time limit counts only its own
 * execution, never its wait; and a process killed for an overrunning call fails that call alone — the
 * calls queued behind it had not started and go to another process. A call goes to an idle process,
 * else is pipelined (PIPELINE_DEPTH) behind running calls of code that last ran quick (QUICK_CALL_MS) while
 * the running one is not yet slow: one warm process serves quick code best, the pipe's round trip is shared.
 * Nothing is queued behind code not yet seen or seen slow: a burst of slow calls must not pile into the one
 * process that happened to be free. When every running call is slow the pool grows, up to one process per
 * core (also when every pipeline of quick code is full), and past that up to `size` while every process
 * runs slow code (how long a call ran is what its process reports); past that, calls wait here in arrival
 * order, in a bounded queue: past `queue` waiting calls a new one is refused at once with a clear error. A
 * call told it waits (onWait) learns when it starts.
 */
import { readFileSync } from "node:fs";
import { availableParallelism, setPriority } from "node:os";
import { LRUCache } from "lru-cache";
import { selfCommand } from "../lib/self-command";
import { inputToJson } from "./input-json";
import { KILL_GRACE_MS, SANDBOX_NICE, type SandboxSettings } from "./limits";
import type { InlineRequest } from "./quickjs-runner";
import { failure, killedFailure, type SandboxResult } from "./result";

interface Call {
  request: InlineRequest;
  /** Bun.hash of the code: how long it last ran is remembered under it. */
  codeHash: number | bigint;
  inputJson: string;
  resolve: (result: SandboxResult) => void;
  /** Told when the call has to wait for a free process (true) and when it starts (false). */
  onWait?: (waiting: boolean) => void;
  waited?: boolean;
}

/** Time a new process gets to load QuickJS and say it is ready. */
const START_TIMEOUT_MS = 15_000;

interface Sent {
  id: number;
  call: Call;
  /** Its code last ran quick: calls may be queued behind it. */
  quick: boolean;
  timer?: ReturnType<typeof setTimeout>;
  /** Past its limit on the wall clock: the CPU time it had used when last looked at, and when that last grew. */
  cpuSeen?: number;
  /** The process's CPU time (ms) when this call was first seen running past SLOW_CALL_MS. */
  cpuWhenSlow?: number;
  progressAt?: number;
}

/**
 * A running call whose process computed nothing at all for this long, past its limit on the wall clock, is
 * stalled (stopped, or blocked without computing) rather than waiting for a core, and is killed.
 */
const STALLED_MS = 10_000;
/** Shortest wait between two looks at a running call's CPU time. */
const CPU_RECHECK_MS = 25;
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every Linux architecture Bun runs on). */
const USER_HZ = 100;

/** CPU time (ms) a process has used, from /proc; undefined where that cannot be read (not Linux). */
function cpuMsOf(pid: number): number | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

class SandboxProcess {
  private readonly proc: ReturnType<typeof Bun.spawn>;
  private ready = false;
  /**
   * Calls sent (or waiting for the process to start), in order. The child runs them one at a time,
   * so only the head is running; its kill timer starts when it becomes the head.
   */
  private readonly sent: Sent[] = [];
  private nextId = 1;
  private flushQueued = false;
  private readonly startTimer: ReturnType<typeof setTimeout>;
  /** Killed by us for an overrunning call: the calls behind it never started. */
  private overran = false;
  /** When the running call (the head) started; undefined while idle or starting. */
  private headStartedAt: number | undefined;
  /** The process's CPU time (ms, as it last reported) when the head started. */
  private headCpuStartMs = 0;
  /** Calls sent that are not known quick: while any is, nothing is queued behind them. */
  private unsure = 0;
  /** Lowered to SANDBOX_NICE (a call in it ran slow); a process cannot raise its priority back. */
  private niced = false;
  /** When its CPU time was last read to decide whether to lower it (performance.now()). */
  private cpuLookedAt = Number.NEGATIVE_INFINITY;
  /** Since when it has had nothing to run (performance.now()). */
  idleSince = performance.now();
  dead = false;

  constructor(
    memoryBytes: number,
    private readonly pool: Pool,
  ) {
    this.proc = Bun.spawn(selfCommand("__sandbox"), {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
      // Nothing of the server's environment (keys, tokens) reaches the sandbox process.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", WEFT_SANDBOX_WARM_BYTES: String(memoryBytes) },
      onExit: (_proc, exitCode, signalCode) => this.exited(exitCode, signalCode),
    });
    // An idle sandbox process must not keep the server alive; a call in flight holds its timer.
    this.proc.unref();
    this.startTimer = setTimeout(() => this.kill(), START_TIMEOUT_MS);
    this.startTimer.unref();
    void this.read();
  }

  get load(): number {
    return this.sent.length;
  }

  get started(): boolean {
    return this.ready;
  }

  /**
   * Is its running call slow (past SLOW_CALL_MS)? Calls are then not queued behind it but go to another
   * process. A call that turns slow marks its code slow at once, and a process still starting for code known
   * slow counts as slow: a burst of slow code gets its processes started together, not one after another.
   * A slow call lowers its process's priority (the pool looks every SLOW_CALL_MS while calls run).
   */
  slow(now: number): boolean {
    const head = this.sent[0];
    if (!head) return false;
    if (this.headStartedAt === undefined) return !this.ready && this.pool.knownSlow(head.call.codeHash);
    const running = now - this.headStartedAt;
    if (running <= SLOW_CALL_MS) return false;
    if (!this.niced && this.computesOn(head, now)) this.lowerPriority();
    // Code known quick may only look slow here (this thread was busy); its reply will tell.
    if (!head.quick) this.pool.learn(head.call.codeHash, running);
    return true;
  }

  /**
   * Does the call, running past SLOW_CALL_MS, keep computing? Its process's CPU time says, not the wall clock:
   * on a loaded machine a quick call can wait longer than that for a core, or for this thread to read its
   * reply, and must not lower its process for good. Counted from when the call was first seen slow, so work the
   * process did before (a collection after earlier calls) is not the call's. Read at most every
   * CPU_RECHECK_MS; where CPU time cannot be read (not Linux), the wall clock decides.
   */
  private computesOn(head: Sent, now: number): boolean {
    if (now - this.cpuLookedAt < CPU_RECHECK_MS) return false;
    this.cpuLookedAt = now;
    const cpuNow = cpuMsOf(this.proc.pid);
    if (cpuNow === undefined) return true;
    head.cpuWhenSlow ??= cpuNow;
    return cpuNow - head.cpuWhenSlow >= SLOW_CALL_MS;
  }

  private lowerPriority() {
    this.niced = true;
    try {
      setPriority(this.proc.pid, SANDBOX_NICE);
    } catch {
      // Not allowed here, or already gone: it keeps the server's priority.
    }
  }

  /**
   * Is it running slow code: a slow call of code not known quick? A known-quick call may only look slow
   * (this thread was too busy to read its reply), so it never makes the pool grow past one process per core.
   */
  slowCode(now: number): boolean {
    return this.slow(now) && this.sent[0]?.quick === false;
  }

  /** May a call be queued behind the ones it has? Only behind quick code, while the running call is not yet slow. */
  takesMore(now: number): boolean {
    return this.unsure === 0 && this.sent.length < PIPELINE_DEPTH && !this.slow(now);
  }

  /** Queues the call in the child (written now, or when the process has started). */
  assign(call: Call) {
    const sent: Sent = { id: this.nextId++, call, quick: this.pool.knownQuick(call.codeHash) };
    if (!sent.quick) this.unsure++;
    if (this.sent.length > 0 && !call.waited) {
      call.waited = true;
      call.onWait?.(true);
    }
    this.sent.push(sent);
    if (!this.ready) return;
    this.write(sent);
    if (this.sent.length === 1) this.arm();
  }

  private write(sent: Sent) {
    const { code, timeoutMs, memoryBytes, maxOutputBytes } = sent.call.request;
    const stdin = this.proc.stdin as import("bun").FileSink;
    try {
      stdin.write(
        `{"id":${sent.id},"timeoutMs":${timeoutMs},"memoryBytes":${memoryBytes},${maxOutputBytes ? `"maxOutputBytes":${maxOutputBytes},` : ""}"code":${JSON.stringify(code)},"input":${sent.call.inputJson}}\n`,
      );
    } catch {
      this.kill();
      return;
    }
    // One flush per tick carries every call queued in it.
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      try {
        stdin.flush();
      } catch {
        this.kill();
      }
    });
  }

  /** Takes the head off the queue (answered or killed). */
  private shift(): Sent | undefined {
    const head = this.sent.shift();
    if (head && !head.quick) this.unsure--;
    return head;
  }

  /** Starts the kill timer of the call now running (the head). */
  private arm() {
    const head = this.sent[0];
    if (!head) {
      this.headStartedAt = undefined;
      this.idleSince = performance.now();
    }
    if (!head || head.timer) return;
    this.headStartedAt = performance.now();
    this.pool.watchSlow();
    if (head.call.waited) head.call.onWait?.(false);
    head.timer = setTimeout(() => this.checkOverrun(head), head.call.request.timeoutMs + KILL_GRACE_MS);
  }

  /**
   * The head's limit + grace has passed on the wall clock. Kill it if it has computed that long, or computed
   * nothing at all for STALLED_MS (or, where CPU time cannot be read, if it has had its share of the cores
   * that long); else look again when it could have.
   */
  private checkOverrun(head: Sent) {
    if (this.sent[0] !== head || this.headStartedAt === undefined) return;
    const budget = head.call.request.timeoutMs + KILL_GRACE_MS;
    const now = performance.now();
    const cpuNow = cpuMsOf(this.proc.pid);
    let next: number;
    if (cpuNow === undefined) {
      const ceiling = budget * this.pool.shareFactor();
      const elapsed = now - this.headStartedAt;
      if (elapsed >= ceiling) return this.overrun(head);
      next = ceiling - elapsed;
    } else {
      const cpu = cpuNow - this.headCpuStartMs;
      if (cpu >= budget) return this.overrun(head);
      if (head.cpuSeen === undefined || cpu > head.cpuSeen) {
        head.cpuSeen = cpu;
        head.progressAt = now;
      } else if (now - (head.progressAt ?? now) >= STALLED_MS) {
        return this.overrun(head);
      }
      next = Math.min(STALLED_MS, Math.max(CPU_RECHECK_MS, budget - cpu));
    }
    head.timer = setTimeout(() => this.checkOverrun(head), next);
  }

  /** Fails the running call as killed and kills the process; the calls behind it go elsewhere. */
  private overrun(head: Sent) {
    this.shift();
    this.pool.learn(head.call.codeHash, head.call.request.timeoutMs);
    head.call.resolve(killedFailure(head.call.request.timeoutMs));
    this.overran = true;
    this.kill();
  }

  /** Stops an idle process: its stdin closes and it exits. */
  retire() {
    if (this.dead || this.sent.length > 0) return;
    this.dead = true;
    try {
      (this.proc.stdin as import("bun").FileSink).end();
    } catch {
      this.proc.kill("SIGKILL");
    }
  }

  kill() {
    if (this.dead) return;
    this.dead = true;
    try {
      this.proc.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }

  private exited(exitCode: number | null, signalCode: number | string | null) {
    this.dead = true;
    clearTimeout(this.startTimer);
    const [head, ...rest] = this.sent.splice(0);
    this.unsure = 0;
    if (head?.timer) clearTimeout(head.timer);
    if (head && this.ready && !this.overran) {
      head.call.resolve(
        failure("internal", `the sandbox process ended during the call (${signalCode ?? `exit code ${exitCode}`}) and was replaced; run the step again`),
      );
    } else if (head) {
      rest.unshift(head);
    }
    // Calls that had not started go to another process; a process that never started fails them instead of looping.
    this.pool.requeue(
      rest.map((sent) => sent.call),
      this.ready,
    );
  }

  private async read() {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of this.proc.stdout as ReadableStream<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line) this.receive(line);
        }
      }
    } catch {
      // The process died; onExit reports it.
    }
  }

  private receive(line: string) {
    let message: { ready?: boolean; id?: number; result?: SandboxResult; ms?: number; cpuMs?: number };
    try {
      message = JSON.parse(line);
    } catch {
      this.kill();
      return;
    }
    if (typeof message.cpuMs === "number") this.headCpuStartMs = message.cpuMs;
    if (message.ready) {
      this.ready = true;
      clearTimeout(this.startTimer);
      for (const sent of this.sent) this.write(sent);
      this.arm();
      return;
    }
    const head = this.sent[0];
    if (!head || message.id !== head.id || !message.result) return;
    clearTimeout(head.timer);
    this.shift();
    this.pool.learn(head.call.codeHash, message.ms ?? performance.now() - (this.headStartedAt ?? 0));
    head.call.resolve(message.result);
    this.arm();
    this.pool.dispatch();
  }
}

/** Calls queued in one busy process behind the running one; the rest wait in the pool. */
const PIPELINE_DEPTH = 16;
/**
 * A running call older than this is slow: calls are no longer queued behind it, and the pool grows (up
 * to WEFT_SANDBOX_PROCESSES) instead. Quick calls share one warm process until its pipeline is full — more
 * processes than cores would only compete with the server for them.
 */
const SLOW_CALL_MS = 30;
/**
 * Code whose last call took at most this long may have calls queued behind it. Past a few ms, sharing the
 * round trip saves nothing worth a call waiting behind another; between this and SLOW_CALL_MS a call gets
 * an idle process, or waits here for one.
 */
const QUICK_CALL_MS = 5;
/** Codes whose last duration is remembered. */
const CODES_REMEMBERED = 10_000;

class Pool {
  private readonly processes: SandboxProcess[] = [];
  private readonly waiting: Call[] = [];
  private recheck: ReturnType<typeof setTimeout> | undefined;
  private idleCheck: ReturnType<typeof setInterval> | undefined;
  private slowCheck: ReturnType<typeof setInterval> | undefined;
  /** How long the code's last call ran, ms (at least: a call still running when it turned slow). */
  private readonly lastDuration = new LRUCache<number | bigint, number>({ max: CODES_REMEMBERED });
  private readonly cores = Math.max(1, availableParallelism());
  size = 1;
  idleMs = 30_000;

  knownQuick(codeHash: number | bigint): boolean {
    return (this.lastDuration.get(codeHash) ?? Number.POSITIVE_INFINITY) <= QUICK_CALL_MS;
  }

  knownSlow(codeHash: number | bigint): boolean {
    return (this.lastDuration.get(codeHash) ?? 0) > SLOW_CALL_MS;
  }

  learn(codeHash: number | bigint, durationMs: number) {
    this.lastDuration.set(codeHash, durationMs);
  }

  /** How much longer than alone a call may take for sharing the cores with the pool's other processes (when its CPU time cannot be read). */
  shareFactor(): number {
    return 2 * Math.max(1, this.size / this.cores);
  }

  submit(call: Call, settings: Pick<SandboxSettings, "processes" | "queue" | "processIdleMs">) {
    this.size = settings.processes;
    if (settings.processIdleMs !== this.idleMs) {
      this.idleMs = settings.processIdleMs;
      clearInterval(this.idleCheck);
      this.idleCheck = undefined;
      this.watchIdle();
    }
    this.waiting.push(call);
    this.dispatch();
    // Still waiting, it is the last in line (dispatch takes from the front).
    if (this.waiting.at(-1) !== call) return;
    // The bound holds whatever the pool's size: the pool may stay below it (quick code grows it only to one process per core).
    if (this.waiting.length > settings.queue) {
      this.waiting.pop();
      call.resolve(
        failure(
          "busy",
          `every sandbox process is busy and ${this.waiting.length} code calls are already waiting (the limit); try again later, or ask the operator to raise WEFT_SANDBOX_PROCESSES or WEFT_SANDBOX_QUEUE`,
        ),
      );
      return;
    }
    call.waited = true;
    call.onWait?.(true);
  }

  dispatch() {
    for (let i = this.processes.length - 1; i >= 0; i--) if (this.processes[i].dead) this.processes.splice(i, 1);
    const now = performance.now();
    while (this.waiting.length) {
      // An idle process; else the least loaded one running quick code, with room in its pipeline; else a new
      // process while the pool has room and, up to one per core, every running call is slow or every pipeline
      // full; past one per core, only while every process runs slow code (more processes than cores would not
      // run quick code any sooner).
      let target = this.processes.find((candidate) => candidate.load === 0);
      if (!target) {
        for (const candidate of this.processes) {
          if (candidate.takesMore(now) && (!target || candidate.load < target.load)) target = candidate;
        }
      }
      const count = this.processes.length;
      if (
        !target &&
        count < this.size &&
        this.processes.every((candidate) => (count < this.cores ? candidate.slow(now) || candidate.load >= PIPELINE_DEPTH : candidate.slowCode(now)))
      ) {
        target = new SandboxProcess(this.waiting[0].request.memoryBytes, this);
        this.processes.push(target);
        this.watchIdle();
      }
      if (!target) {
        // Calls wait here; look again once running calls may have become slow (and the pool may grow).
        if (this.processes.length < this.size && !this.recheck) {
          this.recheck = setTimeout(() => {
            this.recheck = undefined;
            this.dispatch();
          }, SLOW_CALL_MS + 1);
          this.recheck.unref?.();
        }
        return;
      }
      target.assign(this.waiting.shift()!);
    }
  }

  requeue(calls: Call[], processHadStarted: boolean) {
    if (!processHadStarted) {
      for (const call of calls)
        call.resolve(
          failure(
            "internal",
            "the sandbox process could not start; check that the server's executable can run `__sandbox`, or set WEFT_SANDBOX_ISOLATION=inline",
          ),
        );
    } else {
      this.waiting.unshift(...calls);
    }
    this.dispatch();
  }

  /** While calls run, looks every SLOW_CALL_MS for ones that turned slow (their processes' priority is lowered). */
  watchSlow() {
    if (this.slowCheck) return;
    this.slowCheck = setInterval(() => {
      const now = performance.now();
      let running = false;
      for (const candidate of this.processes) {
        if (candidate.load === 0 || candidate.dead) continue;
        running = true;
        candidate.slow(now);
      }
      if (!running) {
        clearInterval(this.slowCheck);
        this.slowCheck = undefined;
      }
    }, SLOW_CALL_MS);
    this.slowCheck.unref?.();
  }

  /** While more than one process runs, stops those idle for `idleMs`, all but one. */
  private watchIdle() {
    if (this.idleCheck || this.processes.length < 2) return;
    this.idleCheck = setInterval(() => this.retireIdle(), Math.max(10, this.idleMs / 4));
    this.idleCheck.unref?.();
  }

  private retireIdle() {
    const now = performance.now();
    let alive = this.processes.filter((candidate) => !candidate.dead).length;
    // The newest go first: dispatch prefers the oldest idle process, so the newest idle the longest.
    for (let i = this.processes.length - 1; i >= 0 && alive > 1; i--) {
      const candidate = this.processes[i];
      if (candidate.dead || !candidate.started || candidate.load > 0 || now - candidate.idleSince < this.idleMs) continue;
      candidate.retire();
      alive--;
    }
    for (let i = this.processes.length - 1; i >= 0; i--) if (this.processes[i].dead) this.processes.splice(i, 1);
    if (this.processes.length < 2) {
      clearInterval(this.idleCheck);
      this.idleCheck = undefined;
    }
  }

  /** Processes alive, those running a call, and calls waiting for one (read-only, for /metrics). */
  counts(): SandboxProcessCounts {
    let processes = 0;
    let busy = 0;
    for (const candidate of this.processes) {
      if (candidate.dead) continue;
      processes++;
      if (candidate.load > 0) busy++;
    }
    return { processes, busy, queued: this.waiting.length };
  }

  stop() {
    clearInterval(this.idleCheck);
    this.idleCheck = undefined;
    clearInterval(this.slowCheck);
    this.slowCheck = undefined;
    for (const process of this.processes.splice(0)) process.kill();
  }
}

/** Made by the first call: its cache of durations is allocated whole (10,000 entries), a cost no start should pay. */
let pool: Pool | undefined;

export function runInProcess(
  request: InlineRequest,
  settings: Pick<SandboxSettings, "processes" | "queue" | "processIdleMs">,
  onWait?: (waiting: boolean) => void,
): Promise<SandboxResult> {
  const input = inputToJson(request.input);
  if (!input.ok) return Promise.resolve(failure("input", input.error));
  pool ??= new Pool();
  const running = pool;
  return new Promise((resolve) => running.submit({ request, codeHash: Bun.hash(request.code), inputJson: input.json, resolve, onWait }, settings));
}

export interface SandboxProcessCounts {
  processes: number;
  busy: number;
  queued: number;
}

/** This thread's sandbox processes (those running a call) and the calls waiting for one; zeros before the first call. */
export function sandboxProcessCounts(): SandboxProcessCounts {
  return pool?.counts() ?? { processes: 0, busy: 0, queued: 0 };
}

/** Kills every sandbox process of this thread (shutdown, tests). Calls in flight fail. */
export function stopSandboxProcesses() {
  pool?.stop();
}
