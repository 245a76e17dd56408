/**
 * Router condition operators: one list for the schema, the gate, the engine and the builder UI (which
 * imports this file, so it stays free of imports).
 */
export const CONDITION_OPERATORS = [
  "text_eq",
  "text_neq",
  "text_contains",
  "text_not_contains",
  "text_starts_with",
  "text_ends_with",
  "text_regex",
  "number_eq",
  "number_neq",
  "number_gt",
  "number_gte",
  "number_lt",
  "number_lte",
  "boolean_true",
  "boolean_false",
  "exists",
  "not_exists",
  "list_contains",
  "list_empty",
  "list_not_empty",
  "date_before",
  "date_after",
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

/** Operators that read no `value`. */
export const UNARY_OPERATORS = ["boolean_true", "boolean_false", "exists", "not_exists", "list_empty", "list_not_empty"] as const;
