/**
 * Display conditions: which of a step's top-level properties are in force given the values chosen so far.
 * One evaluator serves the schema projection (values are query text) and the publish gate (values are
 * the step's config), so the editor, AI agents and the gate never disagree about what a step needs.
 */
import type { DisplayCondition, PropertyDef } from "../../pieces-sdk/types";

const TRUE = new Set(["true", "1", "yes", "on"]);
const FALSE = new Set(["false", "0", "no", "off"]);
const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** Text → the declared scalar type ("true" → true, "3" → 3); anything that does not parse stays as it was. */
export function coerceScalar(value: unknown, type: string | undefined): unknown {
  if (typeof value !== "string") return value;
  const text = value.trim();
  if (type === "boolean") {
    const lower = text.toLowerCase();
    if (TRUE.has(lower)) return true;
    if (FALSE.has(lower)) return false;
    return value;
  }
  if (type === "number" || type === "integer") return NUMERIC.test(text) ? Number(text) : value;
  return value;
}

/** Coerces a value to the gate property's declared type; an array property takes a comma-separated list. */
export function coerceToProperty(value: unknown, prop: PropertyDef | undefined): unknown {
  if (!prop) return value;
  if (prop.type === "array") {
    const list = Array.isArray(value) ? value : typeof value === "string" ? splitList(value) : [value];
    return list.map((item) => coerceScalar(item, prop.items?.type));
  }
  return coerceScalar(value, prop.type);
}

export function splitList(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "object" || typeof b === "object") return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

export function isPresent(value: unknown): boolean {
  if (value === undefined || value === null || value === "") return false;
  return !(Array.isArray(value) && value.length === 0);
}

/** The values a `contains_any` condition accepts: `values`, or `value` as an array or a comma-separated list. */
export function conditionValues(condition: DisplayCondition): unknown[] {
  if (Array.isArray(condition.values)) return condition.values;
  if (Array.isArray(condition.value)) return condition.value;
  if (typeof condition.value === "string") return splitList(condition.value);
  return condition.value === undefined ? [] : [condition.value];
}

/**
 * Does `condition` hold for the gate's value? `value` is already coerced to the gate's declared type;
 * for `contains_any`, a supplied comma-separated list holds when any of its items is accepted.
 */
export function conditionHolds(condition: DisplayCondition, value: unknown, gate: PropertyDef | undefined): boolean {
  switch (condition.operator) {
    case "exists":
      return isPresent(value);
    case "not_exists":
      return !isPresent(value);
    case "eq":
    case "neq": {
      const expected = coerceScalar(condition.value, gate?.type === "array" ? gate.items?.type : gate?.type);
      const equal = Array.isArray(value) && !Array.isArray(expected) ? value.some((v) => same(v, expected)) : same(value, expected);
      return condition.operator === "eq" ? equal : !equal;
    }
    case "contains_any": {
      const itemType = gate?.type === "array" ? gate.items?.type : gate?.type;
      const accepted = conditionValues(condition).map((v) => coerceScalar(v, itemType));
      const supplied = Array.isArray(value) ? value : typeof value === "string" ? splitList(value).map((v) => coerceScalar(v, itemType)) : [value];
      return supplied.some((v) => accepted.some((a) => same(v, a)));
    }
    default:
      return false;
  }
}

/** A config value the gate cannot know before run time: a string holding a `{{ }}` expression. */
export const isExpression = (value: unknown) => typeof value === "string" && value.includes("{{");

export interface PropertyResolution {
  /** Properties whose display conditions hold (or cannot be decided before run time). */
  active: Record<string, PropertyDef>;
  /** Active properties kept only because a gate holds an expression: they cannot be demanded. */
  undecided: string[];
}

/**
 * Resolves display conditions against a step's config. A gate left out of the config takes its
 * declared default (what the step will run with); a gate that is itself not in force counts as absent,
 * so chains of gates resolve. A gate holding an expression keeps the property but leaves it undecided.
 */
export function resolveProperties(props: Record<string, PropertyDef>, config: Record<string, unknown>): PropertyResolution {
  const names = Object.keys(props);
  const inactive = new Set<string>();
  const undecided = new Set<string>();
  // Fixed point: dropping a gate can drop what it gates; a handful of passes settles any real piece.
  for (let pass = 0; pass <= names.length; pass++) {
    let changed = false;
    for (const name of names) {
      if (inactive.has(name)) continue;
      let holds = true;
      let unknown = false;
      for (const condition of props[name].displayConditions ?? []) {
        const gate = props[condition.field];
        let value = inactive.has(condition.field) ? undefined : (config[condition.field] ?? gate?.default);
        if (isExpression(value) || undecided.has(condition.field)) {
          unknown = true;
          continue;
        }
        value = coerceToProperty(value, gate);
        if (!conditionHolds(condition, value, gate)) {
          holds = false;
          break;
        }
      }
      if (!holds) {
        inactive.add(name);
        undecided.delete(name);
        changed = true;
      } else if (unknown && !undecided.has(name)) {
        undecided.add(name);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const active: Record<string, PropertyDef> = {};
  for (const name of names) if (!inactive.has(name)) active[name] = props[name];
  return { active, undecided: [...undecided] };
}

/** The properties whose display conditions hold for the given config (see resolveProperties). */
export function activeProperties(props: Record<string, PropertyDef>, config: Record<string, unknown>): Record<string, PropertyDef> {
  return resolveProperties(props, config).active;
}

/** Required properties in force for this config and missing from it (no value, no default): what the gate reports. */
export function missingRequired(props: Record<string, PropertyDef>, config: Record<string, unknown>): string[] {
  const { active, undecided } = resolveProperties(props, config);
  return Object.entries(active)
    .filter(([name, prop]) => prop.required && !undecided.includes(name) && !isPresent(config[name]) && prop.default === undefined)
    .map(([name]) => name);
}
