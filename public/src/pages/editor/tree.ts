/**
 * Pure operations on the definition tree (FlowVersion): walk it, find steps, insert/delete/move, name
 * new steps uniquely, list the steps a step may refer to, and map a diagnostic's path to its step.
 * Every operation returns a new definition; the editor never mutates what it rendered.
 */
import type { ActionNode, Branch, Definition, StepNode } from "../../types";

/** Where a step sits: in its owner's `nextAction`, loop body, error branch or a router branch. */
export interface Slot {
  owner: string;
  kind: "next" | "loop" | "error" | "branch";
  branch?: number;
}

export const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value));

export interface Visit {
  node: StepNode & Partial<ActionNode>;
  slot: Slot | null;
  depth: number;
}

/** The nodes of the chain starting at `node`, each followed by its branches, loop body and error branch. */
function walkChain(out: Visit[], node: ActionNode | undefined, slot: Slot, depth: number) {
  let current = node;
  let currentSlot = slot;
  while (current) {
    out.push({ node: current, slot: currentSlot, depth });
    for (const [index, branch] of (current.branches ?? []).entries())
      walkChain(out, branch.firstAction, { owner: current.name, kind: "branch", branch: index }, depth + 1);
    walkChain(out, current.firstLoopAction, { owner: current.name, kind: "loop" }, depth + 1);
    walkChain(out, current.onErrorAction, { owner: current.name, kind: "error" }, depth + 1);
    currentSlot = { owner: current.name, kind: "next" };
    current = current.nextAction;
  }
}

/** Every node in execution order (trigger first), with the slot that holds it. */
export function walk(def: Definition): Visit[] {
  const out: Visit[] = [{ node: def.trigger, slot: null, depth: 0 }];
  walkChain(out, def.trigger.nextAction, { owner: def.trigger.name, kind: "next" }, 0);
  return out;
}

/** `steps` and every step nested in them (branches, loop bodies, error branches), the objects themselves. */
function nodesWithin(steps: ActionNode[]): ActionNode[] {
  const out: Visit[] = [];
  for (const step of steps) walkChain(out, step, { owner: "", kind: "next" }, 0);
  return out.map((visit) => visit.node as ActionNode);
}

export function findStep(def: Definition, name: string): (StepNode & Partial<ActionNode>) | undefined {
  return walk(def).find((visit) => visit.node.name === name)?.node;
}

export const stepNames = (def: Definition) => walk(def).map((visit) => visit.node.name);

/** A name usable in expressions (`{{name.output}}`) that no other step has. */
export function uniqueName(def: Definition, base: string): string {
  const clean =
    base
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .replace(/^(?=\d)/, "step_") || "step";
  const taken = new Set(stepNames(def));
  if (!taken.has(clean)) return clean;
  for (let n = 2; ; n++) if (!taken.has(`${clean}_${n}`)) return `${clean}_${n}`;
}

function readSlot(owner: StepNode & Partial<ActionNode>, slot: Slot): ActionNode | undefined {
  if (slot.kind === "next") return owner.nextAction;
  if (slot.kind === "loop") return owner.firstLoopAction;
  if (slot.kind === "error") return owner.onErrorAction;
  return slot.branch === undefined ? undefined : owner.branches?.[slot.branch]?.firstAction;
}

function writeSlot(owner: StepNode & Partial<ActionNode>, slot: Slot, node: ActionNode | undefined) {
  const key = slot.kind === "next" ? "nextAction" : slot.kind === "loop" ? "firstLoopAction" : slot.kind === "error" ? "onErrorAction" : null;
  if (key) {
    if (node) owner[key] = node;
    else delete owner[key];
    return;
  }
  const branch = slot.branch === undefined ? undefined : owner.branches?.[slot.branch];
  if (!branch) throw new Error(`step ${owner.name} has no branch ${slot.branch}`);
  if (node) branch.firstAction = node;
  else delete branch.firstAction;
}

/** Inserts `node` (with any steps chained after it) at `slot`; whatever was there continues after the last of them. */
export function insertStep(def: Definition, slot: Slot, node: ActionNode): Definition {
  const next = clone(def);
  const owner = findStep(next, slot.owner);
  if (!owner) throw new Error(`no step named ${slot.owner}`);
  const displaced = readSlot(owner, slot);
  const inserted = clone(node);
  let last = inserted;
  while (last.nextAction) last = last.nextAction;
  if (displaced) last.nextAction = displaced;
  writeSlot(owner, slot, inserted);
  return next;
}

/** A copy of `node` without the steps after it (what is inside it, such as its branches, stays). */
export function withoutNext(node: ActionNode): ActionNode {
  const { nextAction: _, ...rest } = clone(node);
  return rest;
}

/** Links `nodes` into one chain (each continues with the next), for inserting several steps at one place. */
export function chainOf(nodes: ActionNode[]): ActionNode | undefined {
  const copies = nodes.map(withoutNext);
  copies.forEach((node, index) => {
    const after = copies[index + 1];
    if (after) node.nextAction = after;
  });
  return copies[0];
}

/** The steps of a chain, each without its `nextAction` (nested branches, loop bodies and error branches stay). */
export function stepsOfChain(first: ActionNode | undefined): ActionNode[] {
  const out: ActionNode[] = [];
  for (let current = first; current; current = current.nextAction) out.push(withoutNext(current));
  return out;
}

/** Removes a step; the steps after it move up. Its branches, loop body and error branch go with it. */
export function removeStep(def: Definition, name: string): Definition {
  const next = clone(def);
  const visit = walk(next).find((v) => v.node.name === name);
  if (!visit?.slot) throw new Error(name === next.trigger.name ? "the trigger cannot be deleted; change it instead" : `no step named ${name}`);
  const owner = findStep(next, visit.slot.owner);
  // A slot's owner is a step walk() went through, so it is there.
  if (!owner) throw new Error(`no step named ${visit.slot.owner}`);
  writeSlot(owner, visit.slot, visit.node.nextAction);
  return next;
}

export function updateStep(def: Definition, name: string, patch: (node: StepNode & Partial<ActionNode>) => void): Definition {
  const next = clone(def);
  const node = findStep(next, name);
  if (!node) throw new Error(`no step named ${name}`);
  patch(node);
  return next;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Rewrites step references inside `{{ }}` expressions of `value` (strings, arrays, objects), all
 * renames at once: `{{greet.output}}` → `{{hello.output}}`. A name counts only as a whole reference
 * (`x.greet` or `greeting` are not `greet`).
 */
export function rewriteReferences<T>(value: T, renames: ReadonlyMap<string, string>): T {
  if (renames.size === 0) return value;
  const names = new RegExp(`(?<![\\w.$])(?:${[...renames.keys()].map(escapeRegExp).join("|")})(?=[.\\[\\s}])`, "g");
  const rewrite = (item: unknown): unknown => {
    if (typeof item === "string") return item.replace(/\{\{[\s\S]*?\}\}/g, (expression) => expression.replace(names, (name) => renames.get(name) ?? name));
    if (Array.isArray(item)) return item.map(rewrite);
    if (item && typeof item === "object") return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, rewrite(v)]));
    return item;
  };
  return rewrite(value) as T;
}

/** Renames the steps named in `renames` among `nodes` (nested ones too) and rewrites references to them. */
function applyRenames(nodes: Array<StepNode & Partial<ActionNode>>, renames: ReadonlyMap<string, string>) {
  for (const node of nodes) {
    node.name = renames.get(node.name) ?? node.name;
    if (node.config) node.config = rewriteReferences(node.config, renames);
    node.branches?.forEach((branch: Branch) => {
      branch.conditions = rewriteReferences(branch.conditions, renames);
    });
  }
}

/** Renames a step and rewrites references to it in later expressions (`{{old.` → `{{new.`). */
export function renameStep(def: Definition, from: string, to: string): Definition {
  if (from === to) return def;
  if (stepNames(def).includes(to)) throw new Error(`a step named ${to} already exists; step names are unique`);
  const next = clone(def);
  applyRenames(
    walk(next).map((visit) => visit.node),
    new Map([[from, to]]),
  );
  return next;
}

/**
 * Copies of `steps` ready to go into `def`: each step (nested ones too) whose name `def` already has
 * gets a fresh one (`greet` → `greet_2`), and references to a renamed step inside the copied steps follow
 * it; references to steps outside them are left alone.
 */
export function withFreshNames(def: Definition, steps: ActionNode[]): { steps: ActionNode[]; renames: Map<string, string> } {
  const copies = stepsOfChain(chainOf(steps));
  const nodes = nodesWithin(copies);
  const existing = new Set(stepNames(def));
  const taken = new Set([...existing, ...nodes.map((node) => node.name)]);
  const renames = new Map<string, string>();
  for (const { name } of nodes) {
    if (!existing.has(name)) continue;
    const base = name.replace(/_\d+$/, "") || "step";
    let n = 2;
    while (taken.has(`${base}_${n}`)) n++;
    renames.set(name, `${base}_${n}`);
    taken.add(`${base}_${n}`);
  }
  applyRenames(nodes, renames);
  return { steps: copies, renames };
}

/** Swaps a step with its predecessor ("up") or successor ("down") in the same chain. */
export function moveStep(def: Definition, name: string, direction: "up" | "down"): Definition {
  if (direction === "down") {
    const node = findStep(def, name);
    if (!node?.nextAction) return def;
    return moveStep(def, node.nextAction.name, "up");
  }
  const next = clone(def);
  const visits = walk(next);
  const visit = visits.find((v) => v.node.name === name);
  if (!visit?.slot || visit.slot.kind !== "next") return def; // first in its chain
  // Owners are steps walk() went through, so each lookup below finds one.
  const previous = findStep(next, visit.slot.owner);
  const previousVisit = visits.find((v) => v.node.name === previous?.name);
  if (!previous || !previousVisit) throw new Error(`no step named ${visit.slot.owner}`);
  if (!previousVisit.slot) return def; // the trigger stays first
  const holder = findStep(next, previousVisit.slot.owner);
  if (!holder) throw new Error(`no step named ${previousVisit.slot.owner}`);
  const moving = visit.node as ActionNode;
  const after = moving.nextAction;
  writeSlot(holder, previousVisit.slot, moving);
  moving.nextAction = previous as ActionNode;
  if (after) previous.nextAction = after;
  else delete previous.nextAction;
  return next;
}

/** Steps whose output `name` may refer to: the trigger and every step that surely ran before it. */
export function earlierSteps(def: Definition, name: string): string[] {
  let found: string[] | undefined;
  const chain = (node: ActionNode | undefined, before: string[]) => {
    const seen = [...before];
    for (let current = node; current && !found; current = current.nextAction) {
      if (current.name === name) {
        found = seen;
        return;
      }
      for (const branch of current.branches ?? []) chain(branch.firstAction, [...seen, current.name]);
      chain(current.firstLoopAction, [...seen, current.name]);
      chain(current.onErrorAction, [...seen, current.name]);
      seen.push(current.name);
    }
  };
  if (def.trigger.name === name) return [];
  chain(def.trigger.nextAction, [def.trigger.name]);
  return found ?? [];
}

/** The step a diagnostic path such as `trigger.nextAction.branches[0].firstAction.config.x` points into. */
export function stepForPath(def: Definition, path: string): string | undefined {
  const segments = path.split(/[.[\]/]+/).filter(Boolean);
  let current: unknown = def;
  let step: string | undefined;
  for (const segment of segments) {
    if (current === def && segment === "definition") continue;
    if (current === null || typeof current !== "object" || !(segment in current)) break;
    current = (current as Record<string, unknown>)[segment];
    const node = current as { name?: unknown; type?: unknown } | null | undefined;
    if (node && typeof node === "object" && typeof node.name === "string" && typeof node.type === "string") step = node.name;
  }
  return step;
}

export const NEW_ROUTER = (name: string): ActionNode => ({
  name,
  displayName: "Router",
  type: "ROUTER",
  config: {},
  branches: [
    { name: "Branch 1", conditions: [[{ field: "", operator: "text_eq", value: "" }]] },
    { name: "Otherwise", conditions: [] },
  ],
});

export const NEW_LOOP = (name: string): ActionNode => ({ name, displayName: "Loop on items", type: "LOOP_ON_ITEMS", config: { items: "" } });
