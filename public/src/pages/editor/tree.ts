/**
 * Pure operations on the definition tree (spec 2.3): walk it, find steps, insert/delete/move, name
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

/** Every node in execution order (trigger first), with the slot that holds it. */
export function walk(def: Definition): Visit[] {
  const out: Visit[] = [];
  const chain = (node: ActionNode | undefined, slot: Slot, depth: number) => {
    let current = node;
    let currentSlot = slot;
    while (current) {
      out.push({ node: current, slot: currentSlot, depth });
      for (const [index, branch] of (current.branches ?? []).entries())
        chain(branch.firstAction, { owner: current.name, kind: "branch", branch: index }, depth + 1);
      chain(current.firstLoopAction, { owner: current.name, kind: "loop" }, depth + 1);
      chain(current.onErrorAction, { owner: current.name, kind: "error" }, depth + 1);
      currentSlot = { owner: current.name, kind: "next" };
      current = current.nextAction;
    }
  };
  out.push({ node: def.trigger, slot: null, depth: 0 });
  chain(def.trigger.nextAction, { owner: def.trigger.name, kind: "next" }, 0);
  return out;
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

/** Inserts `node` at `slot`; whatever was there continues after it. */
export function insertStep(def: Definition, slot: Slot, node: ActionNode): Definition {
  const next = clone(def);
  const owner = findStep(next, slot.owner);
  if (!owner) throw new Error(`no step named ${slot.owner}`);
  const displaced = readSlot(owner, slot);
  const inserted = clone(node);
  if (displaced) inserted.nextAction = displaced;
  writeSlot(owner, slot, inserted);
  return next;
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

/** Renames a step and rewrites references to it in later expressions (`{{old.` → `{{new.`). */
export function renameStep(def: Definition, from: string, to: string): Definition {
  if (from === to) return def;
  if (stepNames(def).includes(to)) throw new Error(`a step named ${to} already exists; step names are unique`);
  const pattern = new RegExp(`(\\{\\{\\s*[^}]*?)\\b${from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=[.\\[\\s}])`, "g");
  const rewrite = (value: unknown): unknown => {
    if (typeof value === "string") return value.replace(pattern, `$1${to}`);
    if (Array.isArray(value)) return value.map(rewrite);
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]));
    return value;
  };
  const next = clone(def);
  for (const { node } of walk(next)) {
    if (node.name === from) node.name = to;
    if (node.config) node.config = rewrite(node.config) as Record<string, unknown>;
    node.branches?.forEach((branch: Branch) => {
      branch.conditions = rewrite(branch.conditions) as Branch["conditions"];
    });
  }
  return next;
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
