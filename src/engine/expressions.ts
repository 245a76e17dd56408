/**
 * Expressions (docs/engine.md "Expressions and conditions"): `{{ expr }}` inside any string of a step's
 * `config` holds a JSONata expression evaluated against the run context — never JavaScript.
 *
 * - `findExpressions` / `checkExpressionSyntax` / `expressionRoots` serve the publish gate.
 * - `resolveValue` / `evaluateExpression` serve the executor: each expression is compiled once and
 *   cached; a bare path (`fetch.output.items[0].id`) is read without JSONata (the common, fast case);
 *   a string that is exactly one `{{ }}` keeps the value's type, otherwise results are interpolated as text.
 */
import type Jsonata from "jsonata";
import { BoundedMap } from "../lib/bounded-map";
import { lazy } from "../lib/lazy";

/**
 * JSONata, loaded by the first expression that needs it: most expressions are bare paths and arithmetic that
 * never reach it, and its module builds its whole function library when evaluated (a few ms of start-up).
 */
const jsonataModule = lazy(() => require("jsonata") as typeof Jsonata);
const jsonata = ((source: string, options?: Parameters<typeof Jsonata>[1]) => jsonataModule()(source, options)) as typeof Jsonata;

export interface FoundExpression {
  /** The expression between the braces, trimmed. */
  source: string;
  /** Index in the scanned text of the first character of `source` (so `start + position` of a syntax error is absolute). */
  start: number;
}

/**
 * Every `{{ ... }}` in a string. Braces inside the expression (JSONata object constructors) and
 * inside its string literals are balanced, so `{{ {"a": {"b": 1}} }}` is one expression.
 * An unterminated `{{` is literal text.
 */
export function findExpressions(text: string): FoundExpression[] {
  return scan(text).map(({ source, start }) => ({ source, start }));
}

interface Span extends FoundExpression {
  /** Index of `{{` and the index just past `}}`. */
  open: number;
  end: number;
}

function scan(text: string): Span[] {
  const found: Span[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf("{{", from);
    if (open < 0) return found;
    const close = closingBraces(text, open + 2);
    if (close < 0) return found;
    const raw = text.slice(open + 2, close);
    const lead = raw.length - raw.trimStart().length;
    found.push({ source: raw.trim(), start: open + 2 + lead, open, end: close + 2 });
    from = close + 2;
  }
}

/** Index of the `}}` that closes an expression whose body starts at `i`, or -1. */
function closingBraces(text: string, i: number): number {
  let depth = 0;
  let quote = "";
  for (; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\" && quote !== "`") i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "{") depth++;
    else if (c === "}") {
      if (depth === 0) return text[i + 1] === "}" ? i : -1;
      depth--;
    }
  }
  return -1;
}

export interface SyntaxProblem {
  message: string;
  /** Offset inside `source` where the parser stopped. */
  position: number;
}

/** JSONata parse of one expression; null when it parses. */
export function checkExpressionSyntax(source: string): SyntaxProblem | null {
  if (source.trim() === "") return { message: "empty expression: write a path such as trigger.body.name between {{ and }}", position: 0 };
  try {
    jsonata(source);
    return null;
  } catch (error) {
    const e = error as { message?: string; position?: number; token?: string };
    // JSONata reports the offset just past the offending token; point at its first character instead.
    const tokenLength = e.token && e.token !== "(end)" ? String(e.token).length : 0;
    const position = typeof e.position === "number" ? Math.max(0, Math.min(source.length, e.position - tokenLength)) : 0;
    return { message: e.message ?? String(error), position };
  }
}

type AstNode = { type?: string; value?: unknown; steps?: AstNode[]; [key: string]: unknown };

/**
 * The first path segment of each path that reads the run context: `fetch` for `fetch.output.body`,
 * `trigger`, `variables`, `run`, loop names. `$functions`, `$variables` and names that are relative
 * to an inner context (predicates, later path steps) are not roots. `$$.x` counts `x`.
 * An expression that does not parse has no roots.
 */
export function expressionRoots(source: string): string[] {
  const bare = parseBarePath(source);
  if (bare) return [bare[0] as string];
  let ast: AstNode;
  try {
    ast = jsonata(source).ast() as AstNode;
  } catch {
    return [];
  }
  const roots = new Set<string>();
  collectRoots(ast, roots);
  return [...roots];
}

function collectRoots(node: unknown, roots: Set<string>): void {
  if (!node || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const child of node) collectRoots(child, roots);
    return;
  }
  const n = node as AstNode;
  if (n.type === "path" && Array.isArray(n.steps) && n.steps.length > 0) {
    // Only the first step reads the context the expression started with; later steps are relative.
    const [first, second] = n.steps;
    if (first!.type === "name") roots.add(String(first!.value));
    else if (first!.type === "variable" && first!.value === "$" && second?.type === "name") roots.add(String(second.value));
    else collectRoots(first, roots);
    return;
  }
  if (n.type === "name") {
    roots.add(String(n.value));
    return;
  }
  for (const key of Object.keys(n)) {
    if (key === "value" && (n.type === "string" || n.type === "number" || n.type === "value" || n.type === "regexp")) continue;
    collectRoots(n[key], roots);
  }
}

// ---------------------------------------------------------------- evaluation

/** A failed evaluation: names the expression and JSONata's message. */
export class ExpressionError extends Error {
  constructor(
    readonly expression: string,
    readonly reason: string,
  ) {
    super(`expression {{${expression}}} failed: ${reason}`);
  }
}

/** Limits applied to every JSONata evaluation (a worker's step time limit is the outer guard). */
export const EXPRESSION_LIMITS = { timeoutMs: 5_000, stackDepth: 500, sequenceLength: 1_000_000 };

type Segment = string | number;
/** `path` also gets a JSONata form, made on first need, for paths that map over arrays. */
type Compiled =
  | { kind: "path"; path: Segment[]; expr?: Jsonata.Expression }
  /** `path <op> number`: computed directly when the path holds a finite number, else by JSONata (its errors, its rules). */
  | { kind: "arith"; path: Segment[]; op: string; operand: number; expr?: Jsonata.Expression }
  | { kind: "jsonata"; expr: Jsonata.Expression }
  | { kind: "invalid"; reason: string };

const compiledCache = new BoundedMap<string, Compiled>(10_000);

const BARE_PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*|\s*\[\s*\d+\s*\])*$/;

/** Segments of a bare path (`a.b[0].c` → ["a","b",0,"c"]), or null for anything else. */
function parseBarePath(source: string): Segment[] | null {
  const s = source.trim();
  if (!BARE_PATH.test(s)) return null;
  // JSONata keywords are operators/literals, not paths.
  if (/^(true|false|null|and|or|in|function)$/.test(s)) return null;
  const path: Segment[] = [];
  for (const m of s.matchAll(/([A-Za-z_][A-Za-z0-9_]*)|\[\s*(\d+)\s*\]/g)) path.push(m[1] !== undefined ? m[1] : Number(m[2]));
  return path;
}

const ARITHMETIC = /^([A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*|\s*\[\s*\d+\s*\])*)\s*([-+*/%])\s*(\d+(?:\.\d+)?)$/;

/** `a.b * 2`-style expressions: a bare path and a number literal (the commonest computed field). */
function parseArithmetic(source: string): { path: Segment[]; op: string; operand: number } | null {
  const m = ARITHMETIC.exec(source.trim());
  if (!m) return null;
  const path = parseBarePath(m[1]);
  return path ? { path, op: m[2], operand: Number(m[3]) } : null;
}

/** The operation as JSONata computes it on two numbers; NaN/Infinity are left to JSONata (which refuses them). */
function arithmetic(value: unknown, op: string, operand: number): unknown {
  if (typeof value !== "number") return MISS;
  let result: number;
  switch (op) {
    case "+":
      result = value + operand;
      break;
    case "-":
      result = value - operand;
      break;
    case "*":
      result = value * operand;
      break;
    case "/":
      result = value / operand;
      break;
    default:
      result = value % operand;
  }
  return Number.isFinite(result) ? result : MISS;
}

function compileJsonata(source: string): Jsonata.Expression {
  return jsonata(source, { timeout: EXPRESSION_LIMITS.timeoutMs, stack: EXPRESSION_LIMITS.stackDepth, sequence: EXPRESSION_LIMITS.sequenceLength });
}

function compile(source: string): Compiled {
  let compiled = compiledCache.recall(source);
  if (compiled) return compiled;
  const path = parseBarePath(source);
  const arith = path ? null : parseArithmetic(source);
  if (path) compiled = { kind: "path", path };
  else if (arith) compiled = { kind: "arith", ...arith };
  else {
    try {
      compiled = { kind: "jsonata", expr: compileJsonata(source) };
    } catch (error) {
      compiled = { kind: "invalid", reason: (error as Error).message ?? String(error) };
    }
  }
  compiledCache.set(source, compiled);
  return compiled;
}

const MISS = Symbol("needs-jsonata");

/** Reads a bare path; own properties only (no prototype walks). MISS when JSONata semantics are needed (mapping over an array). */
function readPath(context: unknown, path: Segment[]): unknown {
  let value: unknown = context;
  for (const segment of path) {
    if (value === null || value === undefined) return undefined;
    if (typeof segment === "number") {
      if (!Array.isArray(value)) return MISS;
      value = value[segment];
    } else {
      if (Array.isArray(value)) return MISS;
      if (typeof value !== "object") return undefined;
      value = Object.hasOwn(value, segment) ? (value as Record<string, unknown>)[segment] : undefined;
    }
  }
  return value;
}

/** Strips JSONata's internal sequence markers so results serialise and compare like plain JSON. */
function plain(value: unknown): unknown {
  if (Array.isArray(value) && (value as { sequence?: boolean }).sequence) return Array.from(value);
  return value;
}

/** True when `source` is a bare path, read without JSONata. */
export function isBarePath(source: string): boolean {
  return compile(source.trim()).kind === "path";
}

/** Evaluates one expression (the text between the braces) against the run context. */
export async function evaluateExpression(source: string, context: Record<string, unknown>): Promise<unknown> {
  const trimmed = source.trim();
  const compiled = compile(trimmed);
  if (compiled.kind === "invalid") throw new ExpressionError(trimmed, compiled.reason);
  if (compiled.kind === "path") {
    const value = readPath(context, compiled.path);
    if (value !== MISS) return value;
    compiled.expr ??= compileJsonata(trimmed);
  } else if (compiled.kind === "arith") {
    const value = arithmetic(readPath(context, compiled.path), compiled.op, compiled.operand);
    if (value !== MISS) return value;
    compiled.expr ??= compileJsonata(trimmed);
  }
  try {
    return plain(await compiled.expr!.evaluate(context));
  } catch (error) {
    throw new ExpressionError(trimmed, (error as { message?: string }).message ?? String(error));
  }
}

/** Text form of a value interpolated into a longer string. */
function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}

/** The `{{ }}` spans of `text`; undefined when it has none (the text is its own value). */
function spansOf(text: string): Span[] | undefined {
  if (!text.includes("{{")) return undefined;
  const spans = scan(text);
  return spans.length === 0 ? undefined : spans;
}

/** Exactly one expression and nothing else: the value keeps its type. */
const isWhole = (spans: Span[], text: string) => spans.length === 1 && spans[0].open === 0 && spans[0].end === text.length;

/** `text` with each span replaced by the text form of its value. */
function interpolate(text: string, spans: Span[], values: unknown[]): string {
  let out = "";
  let cursor = 0;
  spans.forEach((span, i) => {
    out += text.slice(cursor, span.open) + asText(values[i]);
    cursor = span.end;
  });
  return out + text.slice(cursor);
}

/** Resolves every `{{ }}` in one string. */
export async function resolveString(text: string, context: Record<string, unknown>): Promise<unknown> {
  const spans = spansOf(text);
  if (!spans) return text;
  if (isWhole(spans, text)) return evaluateExpression(spans[0].source, context);
  const values: unknown[] = [];
  for (const span of spans) values.push(await evaluateExpression(span.source, context));
  return interpolate(text, spans, values);
}

const NEEDS_ASYNC = Symbol("needs-async");

/** A bare path read synchronously; NEEDS_ASYNC for anything JSONata must evaluate. */
function evaluateSync(source: string, context: Record<string, unknown>): unknown {
  const trimmed = source.trim();
  const compiled = compile(trimmed);
  if (compiled.kind === "invalid") throw new ExpressionError(trimmed, compiled.reason);
  if (compiled.kind === "arith") {
    const value = arithmetic(readPath(context, compiled.path), compiled.op, compiled.operand);
    return value === MISS ? NEEDS_ASYNC : value;
  }
  if (compiled.kind !== "path") return NEEDS_ASYNC;
  const value = readPath(context, compiled.path);
  return value === MISS ? NEEDS_ASYNC : value;
}

function resolveStringSync(text: string, context: Record<string, unknown>): unknown {
  const spans = spansOf(text);
  if (!spans) return text;
  if (isWhole(spans, text)) return evaluateSync(spans[0].source, context);
  const values: unknown[] = [];
  for (const span of spans) {
    const value = evaluateSync(span.source, context);
    if (value === NEEDS_ASYNC) return NEEDS_ASYNC;
    values.push(value);
  }
  return interpolate(text, spans, values);
}

function resolveValueSync(value: unknown, context: Record<string, unknown>, depth = 0): unknown {
  if (typeof value === "string") return resolveStringSync(value, context);
  if (value === null || typeof value !== "object" || depth > 64) return value;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = resolveValueSync(value[i], context, depth + 1);
      if (item === NEEDS_ASYNC) return NEEDS_ASYNC;
      out[i] = item;
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = resolveValueSync((value as Record<string, unknown>)[key], context, depth + 1);
    if (item === NEEDS_ASYNC) return NEEDS_ASYNC;
    out[key] = item;
  }
  return out;
}

/**
 * As resolveValue, but synchronous when every expression in the value is a bare path (the common case):
 * returns the resolved value, or a promise when JSONata has to evaluate something.
 */
export function resolveValueFast(value: unknown, context: Record<string, unknown>): unknown | Promise<unknown> {
  const resolved = resolveValueSync(value, context);
  return resolved === NEEDS_ASYNC ? resolveValue(value, context) : resolved;
}

/** Resolves expressions in every string of a config value (objects and arrays walked deeply). */
export async function resolveValue(value: unknown, context: Record<string, unknown>): Promise<unknown> {
  if (typeof value === "string") return resolveString(value, context);
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = await resolveValue(value[i], context);
    return out;
  }
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = await resolveValue((value as Record<string, unknown>)[key], context);
    return out;
  }
  return value;
}

/** True when a value holds any `{{ }}` (so a step with none can skip resolution entirely). */
export function containsExpression(value: unknown): boolean {
  if (typeof value === "string") return value.includes("{{") && findExpressions(value).length > 0;
  if (Array.isArray(value)) return value.some(containsExpression);
  if (value && typeof value === "object") return Object.values(value).some(containsExpression);
  return false;
}
