/**
 * The first line of defence: user JavaScript runs in QuickJS compiled to WebAssembly, in the calling
 * thread. Nothing of the host is reachable from inside (no process, Bun, require, import, fetch,
 * timers); JSON goes in and JSON comes out.
 *
 * - Time: the QuickJS interrupt handler stops the code at its deadline (uncatchable inside): wall-clock
 *   time, or in a sandbox process (countCpuTimeAsCallTime) the call's CPU time.
 * - Memory: the WebAssembly memory the instance runs in has a maximum; past it malloc fails and
 *   QuickJS throws "out of memory". (QuickJS's own memory limit cannot be used: this build has no
 *   malloc_usable_size, so it counts allocations, not bytes.)
 * - Stack: QuickJS's stack limit, kept well under the native stack the host gives wasm frames.
 * - Every call gets a fresh context (its own globals); the runtime is reused until anything unusual
 *   happens (a limit hit, jobs left behind), then replaced. A host-side error (QuickJS or its glue
 *   throwing in the host) replaces the whole WebAssembly instance, so no corrupted state is reused.
 *
 * What it cannot do alone: stop a single built-in call that loops without reaching the interrupt
 * handler (`Array(2**32 - 1).join()` takes minutes). That is what process isolation is for.
 */
import wasmPath from "@jitl/quickjs-wasmfile-release-sync/wasm" with { type: "file" };
import type { Intrinsics, QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { inputToJson } from "./input-json";
import { MAX_LOG_LINE_CHARS, MAX_LOG_LINES, STACK_BYTES } from "./limits";
import { failure, memoryFailure, outputTooLarge, stackFailure, timeoutFailure, type SandboxResult } from "./result";
import { codeShape, ENTRY_EXPORTS } from "./user-code";

export interface InlineRequest {
  code: string;
  input: unknown;
  timeoutMs: number;
  memoryBytes: number;
  /** Largest result, characters of JSON (WEFT_STEP_MAX_OUTPUT_MB): a larger one is refused here, before it is copied out. */
  maxOutputBytes?: number;
}

const PAGE = 64 * 1024;
/** Emscripten's initial memory for this build: static data, the C stack and the runtime itself. */
const BASE_BYTES = 16 * 1024 * 1024;
/** After a call grew the memory by more than this, the instance is dropped so the pages go back to the OS. */
const RECYCLE_GROWTH_BYTES = 16 * 1024 * 1024;
/** A runtime is replaced after this many calls, bounding slow growth (atoms, fragmentation). */
const RUNTIME_MAX_CALLS = 5_000;
/** Pending jobs run between deadline checks. */
const JOB_BATCH = 512;
/** Instances kept for different memory limits at once. */
const MAX_INSTANCES = 3;

/**
 * Built-ins each context gets. TypedArrays are left out: they cost a third of the context's
 * creation time and workflow code exchanges JSON (no binary data crosses the boundary).
 */
const INTRINSICS: Intrinsics = {
  BaseObjects: true,
  Date: true,
  Eval: true,
  StringNormalize: true,
  RegExp: true,
  JSON: true,
  Proxy: true,
  MapSet: true,
  Promise: true,
};

interface Instance {
  quickjs: QuickJSWASMModule;
  memory: WebAssembly.Memory;
  memoryBytes: number;
  runtime: QuickJSRuntime | undefined;
  runtimeCalls: number;
  /** performance.now() past which the interrupt handler stops the code (or, counting CPU time, looks at it). */
  deadline: number;
  /** The running call's limit, and this process's CPU time (ms) when it started (counting CPU time). */
  timeoutMs: number;
  cpuStartMs: number;
  alive: boolean;
  /** The map entry that holds it, so dropping can remove exactly that entry. */
  promise?: Promise<Instance>;
}

let compiled: Promise<WebAssembly.Module> | undefined;
const instances = new Map<number, Promise<Instance>>();

function wasmModule(): Promise<WebAssembly.Module> {
  compiled ??= Bun.file(wasmPath)
    .arrayBuffer()
    .then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}

async function createInstance(memoryBytes: number): Promise<Instance> {
  const maximumPages = Math.ceil((BASE_BYTES + memoryBytes) / PAGE);
  const memory = new WebAssembly.Memory({ initial: BASE_BYTES / PAGE, maximum: maximumPages });
  // Loaded by the first instance, not with the server: a server with no code step never needs them (~3–14 ms of start-up).
  const [{ newQuickJSWASMModuleFromVariant, newVariant }, { default: releaseSync }] = await Promise.all([
    import("quickjs-emscripten-core"),
    import("@jitl/quickjs-wasmfile-release-sync"),
  ]);
  const quickjs = await newQuickJSWASMModuleFromVariant(newVariant(releaseSync, { wasmModule: await wasmModule(), wasmMemory: memory }));
  return { quickjs, memory, memoryBytes, runtime: undefined, runtimeCalls: 0, deadline: 0, timeoutMs: 0, cpuStartMs: 0, alive: true };
}

function instanceFor(memoryBytes: number): Promise<Instance> {
  let instance = instances.get(memoryBytes);
  if (!instance) {
    if (instances.size >= MAX_INSTANCES) instances.delete(instances.keys().next().value!);
    const created = createInstance(memoryBytes);
    instances.set(memoryBytes, created);
    created.then(
      (ready) => (ready.promise = created),
      () => instances.get(memoryBytes) === created && instances.delete(memoryBytes),
    );
    instance = created;
  }
  return instance;
}

/** Forgets the instance; its WebAssembly memory is freed by the garbage collector. */
function dropInstance(instance: Instance) {
  if (!instance.alive) return;
  instance.alive = false;
  instance.runtime = undefined;
  if (instance.promise && instances.get(instance.memoryBytes) === instance.promise) instances.delete(instance.memoryBytes);
}

function dropRuntime(instance: Instance) {
  const runtime = instance.runtime;
  instance.runtime = undefined;
  if (!runtime) return;
  try {
    runtime.dispose();
  } catch {
    // A runtime that cannot be freed cleanly means the instance's heap is suspect.
    dropInstance(instance);
  }
}

function runtimeOf(instance: Instance): QuickJSRuntime {
  if (instance.runtime && instance.runtimeCalls < RUNTIME_MAX_CALLS) return instance.runtime;
  dropRuntime(instance);
  const runtime = instance.quickjs.newRuntime();
  runtime.setMaxStackSize(STACK_BYTES);
  runtime.setInterruptHandler(() => pastDeadline(instance));
  instance.runtime = runtime;
  instance.runtimeCalls = 0;
  return runtime;
}

/**
 * Counting CPU time: only a sandbox process (./child.ts) turns it on. It runs one call at a time and nothing
 * else, so its CPU time (process.cpuUsage(), every thread) is the call's. Inline, a call shares its process
 * with the server or an engine worker and Bun offers no per-thread CPU time, so the limit stays wall-clock.
 */
let countCpuTime = false;

export function countCpuTimeAsCallTime() {
  countCpuTime = true;
}

/** This process's CPU time, ms. */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Has the running call used up its time? The wall clock is read first (~40 ns; the CPU clock ~0.7 µs);
 * counting CPU time, the CPU clock is read only once the wall clock has passed the deadline — one thread
 * computes, so the CPU time gets there no sooner (and a call is never stopped before either has). Short
 * of the limit, the deadline moves to the earliest moment the CPU time could reach it.
 */
function pastDeadline(instance: Instance): boolean {
  const now = performance.now();
  if (now <= instance.deadline) return false;
  if (!countCpuTime) return true;
  const used = processCpuMs() - instance.cpuStartMs;
  if (used >= instance.timeoutMs) return true;
  instance.deadline = now + (instance.timeoutMs - used);
  return false;
}

/** Loads and compiles QuickJS ahead of the first call (start-up, benchmarks). */
export async function warmInline(memoryBytes: number): Promise<void> {
  await instanceFor(memoryBytes);
}

export async function runInline(request: InlineRequest): Promise<SandboxResult> {
  const input = inputToJson(request.input);
  if (!input.ok) return failure("input", input.error);
  let instance: Instance;
  try {
    instance = await instanceFor(request.memoryBytes);
  } catch (error) {
    return failure("internal", `the sandbox could not start: ${(error as Error).message}`);
  }
  if (!instance.alive) instance = await instanceFor(request.memoryBytes);
  return execute(instance, request, input.json);
}

/** What a finished call leaves behind decides whether its runtime may serve the next one. */
interface Outcome {
  result: SandboxResult;
  reuseRuntime: boolean;
}

function execute(instance: Instance, request: InlineRequest, inputJson: string): SandboxResult {
  const memoryBefore = instance.memory.buffer.byteLength;
  let outcome: Outcome;
  let context: QuickJSContext | undefined;
  try {
    const runtime = runtimeOf(instance);
    instance.runtimeCalls++;
    instance.timeoutMs = request.timeoutMs;
    instance.cpuStartMs = countCpuTime ? processCpuMs() : 0;
    instance.deadline = performance.now() + request.timeoutMs;
    context = runtime.newContext({ intrinsics: INTRINSICS });
    outcome = drive(instance, runtime, context, request, inputJson);
    context.dispose();
    context = undefined;
    if (!outcome.reuseRuntime || runtime.hasPendingJob()) dropRuntime(instance);
  } catch (error) {
    // The host side of QuickJS threw (a wasm trap, the host stack, a glue assertion): never reuse it.
    dropInstance(instance);
    const message = (error as Error)?.message ?? String(error);
    if (/call stack|stack size/i.test(message)) return stackFailure();
    if (pastDeadline(instance)) return timeoutFailure(request.timeoutMs);
    if (outOfMemory(instance, message)) return memoryFailure(request.memoryBytes);
    return failure("internal", `the sandbox failed and was replaced (${message}); run the step again`);
  }
  if (instance.memory.buffer.byteLength - memoryBefore > RECYCLE_GROWTH_BYTES || instance.memory.buffer.byteLength > BASE_BYTES + RECYCLE_GROWTH_BYTES) {
    dropInstance(instance);
  }
  return outcome.result;
}

function outOfMemory(instance: Instance, message: string): boolean {
  return /out of memory/i.test(message) || instance.memory.buffer.byteLength + 2 * 1024 * 1024 >= BASE_BYTES + instance.memoryBytes;
}

/**
 * One call, driven from the host through handles rather than a JavaScript driver inside (compiling a
 * driver per context cost more than the user's code). JSON.parse and JSON.stringify are taken before
 * the user's code runs, so code that replaces them only changes its own result.
 */
function drive(instance: Instance, runtime: QuickJSRuntime, context: QuickJSContext, request: InlineRequest, inputJson: string): Outcome {
  const logs: string[] = [];
  const owned: QuickJSHandle[] = [];
  const own = (handle: QuickJSHandle) => {
    owned.push(handle);
    return handle;
  };
  try {
    const json = own(context.getProp(context.global, "JSON"));
    const parse = own(context.getProp(json, "parse"));
    const stringify = own(context.getProp(json, "stringify"));
    // Only code that mentions console pays for it.
    if (request.code.includes("console")) installConsole(context, logs, stringify);
    const entry = compile(instance, runtime, context, request, logs);
    if ("result" in entry) return entry;
    const fn = own(entry.fn);
    const parsed = context.callFunction(parse, context.undefined, own(context.newString(inputJson)));
    if (parsed.error) return fromHandle(instance, request, context, parsed.error, logs);
    const returned = context.callFunction(fn, context.undefined, own(parsed.value));
    if (returned.error) return fromHandle(instance, request, context, returned.error, logs);
    const settled = settleHandle(instance, runtime, context, request, returned.value, logs);
    if ("result" in settled) return settled;
    const serialized = context.callFunction(stringify, context.undefined, own(settled.handle));
    if (serialized.error) return outputFailure(instance, request, context, serialized.error, logs);
    const text = own(serialized.value);
    // undefined, functions and symbols have no JSON: the step's output is null.
    if (context.typeof(text) !== "string") return { result: { ok: true, value: null, logs }, reuseRuntime: true };
    const resultJson = context.getString(text);
    if (request.maxOutputBytes !== undefined && resultJson.length > request.maxOutputBytes)
      return { result: outputTooLarge(resultJson.length, request.maxOutputBytes, logs), reuseRuntime: true };
    return { result: { ok: true, value: JSON.parse(resultJson), logs }, reuseRuntime: true };
  } finally {
    for (const handle of owned) if (handle.alive) handle.dispose();
  }
}

/** A function body, or a module's entry export, as a function handle. */
function compile(
  instance: Instance,
  runtime: QuickJSRuntime,
  context: QuickJSContext,
  request: InlineRequest,
  logs: string[],
): Outcome | { fn: QuickJSHandle } {
  if (codeShape(request.code) === "body") {
    // Only code that awaits is compiled async: a sync function skips the promise machinery.
    const header = /\bawait\b/.test(request.code) ? "(async function (input) {" : "(function (input) {";
    const compiled = context.evalCode(`${header}\n${request.code}\n})`, CODE_FILE);
    if (compiled.error) return fromHandle(instance, request, context, compiled.error, logs);
    return { fn: compiled.value };
  }
  const evaluated = context.evalCode(request.code, CODE_FILE, { type: "module" });
  if (evaluated.error) return fromHandle(instance, request, context, evaluated.error, logs);
  // With top-level await the namespace arrives as a promise.
  const settled = settleHandle(instance, runtime, context, request, evaluated.value, logs);
  if ("result" in settled) return settled;
  const namespace = settled.handle;
  try {
    for (const name of ENTRY_EXPORTS) {
      const candidate = context.getProp(namespace, name);
      if (context.typeof(candidate) === "function") return { fn: candidate };
      candidate.dispose();
    }
  } finally {
    namespace.dispose();
  }
  return {
    result: failure(
      "error",
      "the module exports no function to run; export one as `export const code = async (input) => { ... }` or `export default (input) => ...`, or write a function body that uses `input` and `return`",
      logs,
    ),
    reuseRuntime: true,
  };
}

const CODE_FILE = "code.js";

/** console.log/info/warn/error/debug collect lines for the step's log (capped). */
function installConsole(context: QuickJSContext, logs: string[], stringify: QuickJSHandle) {
  const show = (handle: QuickJSHandle): string => {
    if (context.typeof(handle) === "string") return context.getString(handle);
    const text = context.callFunction(stringify, context.undefined, handle);
    if (text.error) {
      text.error.dispose();
      return `[${context.typeof(handle)}]`;
    }
    const out = context.typeof(text.value) === "string" ? context.getString(text.value) : String(context.dump(handle));
    text.value.dispose();
    return out;
  };
  const log = context.newFunction("log", (...args) => {
    if (logs.length < MAX_LOG_LINES) logs.push(args.map(show).join(" ").slice(0, MAX_LOG_LINE_CHARS));
  });
  const console = context.newObject();
  for (const level of ["log", "info", "warn", "error", "debug"]) context.setProp(console, level, log);
  context.setProp(context.global, "console", console);
  console.dispose();
  log.dispose();
}

/** Runs pending jobs until the value settles (a non-promise is settled), the deadline passes or nothing is left to run. */
function settleHandle(
  instance: Instance,
  runtime: QuickJSRuntime,
  context: QuickJSContext,
  request: InlineRequest,
  value: QuickJSHandle,
  logs: string[],
): Outcome | { handle: QuickJSHandle } {
  for (;;) {
    const state = context.getPromiseState(value);
    if (state.type === "fulfilled") {
      if (state.notAPromise) return { handle: value };
      value.dispose();
      return { handle: state.value };
    }
    if (state.type === "rejected") {
      value.dispose();
      return fromHandle(instance, request, context, state.error, logs);
    }
    if (pastDeadline(instance)) {
      value.dispose();
      return { result: timeoutFailure(request.timeoutMs, logs), reuseRuntime: false };
    }
    if (!runtime.hasPendingJob()) {
      value.dispose();
      return {
        result: failure(
          "error",
          "the code awaited a promise that never settles; the sandbox has no timers or network, so await only values the code computes itself",
          logs,
        ),
        reuseRuntime: false,
      };
    }
    const jobs = runtime.executePendingJobs(JOB_BATCH);
    if (jobs.error) {
      // An exception no job caught: a limit (an interrupt is uncatchable) ends the call; anything else is the promise's business.
      const outcome = fromHandle(instance, request, context, jobs.error, logs);
      if (!outcome.reuseRuntime) {
        value.dispose();
        return outcome;
      }
    }
  }
}

interface ErrorInfo {
  name: string;
  message: string;
  stack: string;
}

function readError(context: QuickJSContext, error: QuickJSHandle): ErrorInfo {
  try {
    if (context.typeof(error) !== "object") return { name: "Error", message: `code threw ${String(context.dump(error))}`, stack: "" };
    // QuickJS throws null when it cannot even allocate the error: almost always the memory limit.
    if (context.dump(error) === null)
      return {
        name: "Error",
        message:
          "code threw null — usually the sandbox's memory limit was reached while building a large value; build less data per run, or ask the operator to raise WEFT_SANDBOX_MEMORY_MB",
        stack: "",
      };
    const read = (key: string) => {
      const handle = context.getProp(error, key);
      const text = context.typeof(handle) === "string" ? context.getString(handle) : undefined;
      handle.dispose();
      return text;
    };
    const message = read("message");
    if (message === undefined) return { name: "Error", message: `code threw ${JSON.stringify(context.dump(error))}`, stack: "" };
    return { name: read("name") ?? "Error", message, stack: read("stack") ?? "" };
  } catch {
    return { name: "Error", message: "code threw a value that could not be read", stack: "" };
  } finally {
    error.dispose();
  }
}

/** An exception from QuickJS: a limit that was hit, or an error in the user's code. */
function fromHandle(instance: Instance, request: InlineRequest, context: QuickJSContext, error: QuickJSHandle, logs: string[]): Outcome {
  const info = readError(context, error);
  if ((info.name === "InternalError" && info.message === "interrupted") || pastDeadline(instance)) {
    return { result: timeoutFailure(request.timeoutMs, logs), reuseRuntime: false };
  }
  if (/out of memory/i.test(info.message) || (info.name === "InternalError" && outOfMemory(instance, info.message))) {
    return { result: memoryFailure(request.memoryBytes, logs), reuseRuntime: false };
  }
  if (info.name === "InternalError" && /stack overflow/i.test(info.message)) return { result: stackFailure(logs), reuseRuntime: false };
  if (info.name === "SyntaxError" && /stack overflow/i.test(info.message)) return { result: stackFailure(logs), reuseRuntime: false };
  return { result: failure("error", `${info.name}: ${info.message}${where(info.stack, request.code)}`, logs), reuseRuntime: true };
}

function outputFailure(instance: Instance, request: InlineRequest, context: QuickJSContext, error: QuickJSHandle, logs: string[]): Outcome {
  const outcome = fromHandle(instance, request, context, error, logs);
  const result = outcome.result;
  if (result.ok || (result.reason !== "error" && result.reason !== "stack")) return outcome;
  const message =
    result.reason === "stack"
      ? "the code's result is nested too deeply to turn into JSON; return a flatter value"
      : `the code's result is not JSON (${result.error.replace(/^\w+: /, "")}); return plain objects, arrays, strings, numbers, booleans or null`;
  return { result: failure("output", message, logs), reuseRuntime: outcome.reuseRuntime };
}

/** " (line N)" of the user's code, from the first stack frame that points into it. */
function where(stack: string, code: string): string {
  const frame = /code\.js:(\d+)/.exec(stack);
  if (!frame) return "";
  // A function body is compiled one line below its wrapper's header.
  const line = Number(frame[1]) - (codeShape(code) === "body" ? 1 : 0);
  return line >= 1 ? ` (line ${line})` : "";
}
