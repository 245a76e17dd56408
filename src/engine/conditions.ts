/**
 * Router conditions (docs/engine.md "Expressions and conditions"): `conditions` is OR over groups, AND inside
 * a group; a branch with `conditions: []` is the fallback. Operands arrive with their `{{ }}` expressions
 * already resolved. Comparisons that cannot apply (a number operator on text that is not a number, a date
 * operator on something that is not a date) are false rather than errors, so a router always picks a branch.
 */
import { LRUCache } from "lru-cache";
import { CONDITION_OPERATORS, type ConditionOperator } from "../schema/operators";

export { CONDITION_OPERATORS };

export interface ResolvedCondition {
  field: unknown;
  operator: string;
  value?: unknown;
}

export class ConditionError extends Error {}

const regexCache = new LRUCache<string, RegExp>({ max: 1000 });

function text(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function number(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "") return Number(value);
  if (typeof value === "boolean") return value ? 1 : 0;
  return Number.NaN;
}

function date(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "") {
    if (/^\d+$/.test(value.trim())) return Number(value);
    return Date.parse(value);
  }
  if (value instanceof Date) return value.getTime();
  return Number.NaN;
}

function truthy(value: unknown): boolean {
  return value === true || value === 1 || (typeof value === "string" && ["true", "1", "yes"].includes(value.trim().toLowerCase()));
}

function falsy(value: unknown): boolean {
  return value === false || value === 0 || (typeof value === "string" && ["false", "0", "no"].includes(value.trim().toLowerCase()));
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "object" || typeof b === "object") return JSON.stringify(a) === JSON.stringify(b);
  return text(a) === text(b);
}

function compareNumbers(field: unknown, value: unknown, test: (a: number, b: number) => boolean): boolean {
  const a = number(field);
  const b = number(value);
  return !Number.isNaN(a) && !Number.isNaN(b) && test(a, b);
}

function regex(pattern: unknown): RegExp {
  const source = text(pattern);
  let compiled = regexCache.get(source);
  if (!compiled) {
    // `/pattern/flags` form is accepted as well as a bare pattern.
    const literal = /^\/(.*)\/([dgimsuvy]*)$/s.exec(source);
    try {
      compiled = literal ? new RegExp(literal[1], literal[2].replace(/[gy]/g, "")) : new RegExp(source);
    } catch (error) {
      throw new ConditionError(`text_regex value ${JSON.stringify(source)} is not a valid regular expression: ${(error as Error).message}`);
    }
    regexCache.set(source, compiled);
  }
  return compiled;
}

export function conditionHolds(condition: ResolvedCondition): boolean {
  const { field, value } = condition;
  switch (condition.operator as ConditionOperator) {
    case "text_eq":
      return text(field) === text(value);
    case "text_neq":
      return text(field) !== text(value);
    case "text_contains":
      return text(field).includes(text(value));
    case "text_not_contains":
      return !text(field).includes(text(value));
    case "text_starts_with":
      return text(field).startsWith(text(value));
    case "text_ends_with":
      return text(field).endsWith(text(value));
    case "text_regex":
      return regex(value).test(text(field));
    case "number_eq":
      return compareNumbers(field, value, (a, b) => a === b);
    case "number_neq":
      return compareNumbers(field, value, (a, b) => a !== b);
    case "number_gt":
      return compareNumbers(field, value, (a, b) => a > b);
    case "number_gte":
      return compareNumbers(field, value, (a, b) => a >= b);
    case "number_lt":
      return compareNumbers(field, value, (a, b) => a < b);
    case "number_lte":
      return compareNumbers(field, value, (a, b) => a <= b);
    case "boolean_true":
      return truthy(field);
    case "boolean_false":
      return falsy(field);
    case "exists":
      return field !== undefined && field !== null;
    case "not_exists":
      return field === undefined || field === null;
    case "list_contains":
      return Array.isArray(field) && field.some((item) => same(item, value));
    case "list_empty":
      return field === undefined || field === null || (Array.isArray(field) && field.length === 0);
    case "list_not_empty":
      return Array.isArray(field) && field.length > 0;
    case "date_before": {
      const a = date(field);
      const b = date(value);
      return !Number.isNaN(a) && !Number.isNaN(b) && a < b;
    }
    case "date_after": {
      const a = date(field);
      const b = date(value);
      return !Number.isNaN(a) && !Number.isNaN(b) && a > b;
    }
    default:
      throw new ConditionError(`unknown condition operator "${condition.operator}"; use one of: ${CONDITION_OPERATORS.join(", ")}`);
  }
}

/** OR over groups, AND inside a group (an empty group holds). `[]` never holds here: the caller treats it as the fallback. */
export function conditionsHold(groups: ResolvedCondition[][]): boolean {
  return groups.some((group) => group.every(conditionHolds));
}
