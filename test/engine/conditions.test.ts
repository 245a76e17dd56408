import { describe, expect, test } from "bun:test";
import { CONDITION_OPERATORS, conditionHolds, conditionsHold } from "../../src/engine/conditions";

const rows: Array<[string, unknown, unknown, boolean]> = [
  ["text_eq", "abc", "abc", true],
  ["text_eq", 10, "10", true],
  ["text_eq", "abc", "abd", false],
  ["text_neq", "abc", "abd", true],
  ["text_neq", "abc", "abc", false],
  ["text_contains", "hello world", "lo w", true],
  ["text_contains", "hello", "x", false],
  ["text_not_contains", "hello", "x", true],
  ["text_not_contains", "hello", "ell", false],
  ["text_starts_with", "hello", "he", true],
  ["text_starts_with", "hello", "lo", false],
  ["text_ends_with", "hello", "lo", true],
  ["text_ends_with", "hello", "he", false],
  ["text_regex", "order-123", "^order-\\d+$", true],
  ["text_regex", "ORDER", "/order/i", true],
  ["text_regex", "x", "^y", false],
  ["number_eq", "5", 5, true],
  ["number_eq", 5, 6, false],
  ["number_eq", "five", 5, false],
  ["number_neq", 5, 6, true],
  ["number_neq", 5, 5, false],
  ["number_gt", 6, 5, true],
  ["number_gt", 5, 5, false],
  ["number_gte", 5, 5, true],
  ["number_gte", 4, 5, false],
  ["number_lt", 4, 5, true],
  ["number_lt", 5, 5, false],
  ["number_lte", 5, 5, true],
  ["number_lte", 6, 5, false],
  ["boolean_true", true, undefined, true],
  ["boolean_true", "true", undefined, true],
  ["boolean_true", false, undefined, false],
  ["boolean_false", false, undefined, true],
  ["boolean_false", "false", undefined, true],
  ["boolean_false", true, undefined, false],
  ["exists", 0, undefined, true],
  ["exists", "", undefined, true],
  ["exists", undefined, undefined, false],
  ["exists", null, undefined, false],
  ["not_exists", undefined, undefined, true],
  ["not_exists", "x", undefined, false],
  ["list_contains", [1, 2, 3], 2, true],
  ["list_contains", ["a", { b: 1 }], { b: 1 }, true],
  ["list_contains", [1], 2, false],
  ["list_contains", "abc", "a", false],
  ["list_empty", [], undefined, true],
  ["list_empty", undefined, undefined, true],
  ["list_empty", [1], undefined, false],
  ["list_not_empty", [1], undefined, true],
  ["list_not_empty", [], undefined, false],
  ["date_before", "2024-01-01T00:00:00Z", "2024-06-01", true],
  ["date_before", "2025-01-01", "2024-06-01", false],
  ["date_before", "soon", "2024-06-01", false],
  ["date_after", "2025-01-01", "2024-06-01T00:00:00Z", true],
  ["date_after", 0, 1000, false],
];

describe("condition operators (docs/engine.md)", () => {
  test("the table covers every operator", () => {
    expect(new Set(rows.map((r) => r[0]))).toEqual(new Set(CONDITION_OPERATORS));
  });
  for (const [operator, field, value, expected] of rows) {
    test(`${operator}(${JSON.stringify(field)}, ${JSON.stringify(value)}) is ${expected}`, () => {
      expect(conditionHolds({ field, operator, value })).toBe(expected);
    });
  }

  test("an unknown operator names the legal ones", () => {
    expect(() => conditionHolds({ field: 1, operator: "equals", value: 1 })).toThrow(/unknown condition operator "equals"; use one of: text_eq/);
  });

  test("an invalid regular expression is a clear error", () => {
    expect(() => conditionHolds({ field: "x", operator: "text_regex", value: "(" })).toThrow(/not a valid regular expression/);
  });

  test("OR over groups, AND inside a group", () => {
    const yes = { field: 1, operator: "number_eq", value: 1 };
    const no = { field: 1, operator: "number_eq", value: 2 };
    expect(conditionsHold([[yes, no], [yes]])).toBe(true);
    expect(conditionsHold([[yes, no], [no]])).toBe(false);
    expect(conditionsHold([[yes, yes]])).toBe(true);
    expect(conditionsHold([])).toBe(false);
  });
});
