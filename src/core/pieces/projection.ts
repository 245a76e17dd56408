/**
 * The schema projection of one action or trigger (docs/pieces.md "Schema projections"): the minimal, exact input schema
 * given the gate values a caller already chose. Each step definition is compiled once (property objects
 * converted, gates indexed); each distinct query is then a cheap pass over that compiled form.
 */
import type { ActionDef, DisplayCondition, PieceDef, PropertyDef, TriggerDef } from "../../pieces-sdk/types";
import { conditionHolds, coerceToProperty } from "./conditions";

/** Query keys that select nothing and never land in `ignored` (the reserved `view` and `gateValues`). */
export const RESERVED_QUERY_KEYS = new Set(["view", "gateValues"]);

/**
 * A projected property: the SDK's PropertyDef as plain data — no functions, no editor-only labels,
 * `required` always present.
 */
export type ProjectedProperty = Omit<PropertyDef, "type" | "displayName" | "options" | "properties" | "items" | "required" | "displayConditions"> & {
  type: string;
  required: boolean;
  properties?: Record<string, ProjectedProperty>;
  items?: ProjectedProperty;
  displayConditions?: Array<{ field: string; operator: string; value?: unknown; values?: unknown[] }>;
};

export interface ObjectSchema {
  type: string;
  properties: Record<string, ProjectedProperty>;
  required: string[];
}

export interface Projection {
  pieceId: string;
  pieceVersion: string;
  id: string;
  name: string;
  description: string;
  sideEffects: string;
  inputSchema: ObjectSchema;
  outputSchema: ObjectSchema;
  sampleData: unknown;
  filteredBy: Record<string, string>;
  ignored: string[];
  unresolved: string[];
  conditionalFields: string[];
  dynamicFields: string[];
}

function projectedCondition(condition: DisplayCondition) {
  const out: { field: string; operator: string; value?: unknown; values?: unknown[] } = { field: condition.field, operator: condition.operator };
  if (condition.operator === "contains_any") {
    // Both spellings: `values` as a list, `value` as a comma-separated list (docs/pieces.md "Display conditions").
    const values = Array.isArray(condition.values)
      ? condition.values
      : Array.isArray(condition.value)
        ? condition.value
        : typeof condition.value === "string"
          ? condition.value.split(",").map((s) => s.trim())
          : [];
    out.value = values.join(",");
    out.values = values;
    return out;
  }
  if (condition.value !== undefined) out.value = condition.value;
  if (condition.values !== undefined) out.values = condition.values;
  return out;
}

/** PropertyDef → projected property (fields in a fixed order), recursively: nested properties keep every field. */
export function toProjectedProperty(prop: PropertyDef): ProjectedProperty {
  const out = { type: prop.type } as ProjectedProperty;
  // displayName is an editor label, not a projected field: it stands in for a missing description.
  const description = prop.description ?? prop.displayName;
  if (description !== undefined) out.description = description;
  if (prop.default !== undefined) out.default = prop.default;
  if (prop.enum !== undefined) out.enum = prop.enum;
  if (prop.enumLabels !== undefined) out.enumLabels = prop.enumLabels;
  if (prop.format !== undefined) out.format = prop.format;
  if (prop.properties !== undefined) out.properties = Object.fromEntries(Object.entries(prop.properties).map(([k, v]) => [k, toProjectedProperty(v)]));
  if (prop.items !== undefined) out.items = toProjectedProperty(prop.items);
  if (prop.propertyType !== undefined) out.propertyType = prop.propertyType;
  out.required = prop.required === true;
  for (const key of ["minLength", "maxLength", "min", "max", "pattern", "refreshers", "language"] as const) {
    if (prop[key] !== undefined) (out as any)[key] = prop[key];
  }
  if (prop.displayConditions?.length) out.displayConditions = prop.displayConditions.map(projectedCondition);
  return out;
}

/** The output schema in the projection's `{type, properties, required}` shape. */
export function toObjectSchema(prop: PropertyDef | undefined): ObjectSchema {
  if (!prop) return { type: "object", properties: {}, required: [] };
  const properties = Object.fromEntries(Object.entries(prop.properties ?? {}).map(([k, v]) => [k, toProjectedProperty(v)]));
  return {
    type: prop.type,
    properties,
    required: Object.entries(prop.properties ?? {})
      .filter(([, v]) => v.required)
      .map(([k]) => k),
  };
}

/** A step definition prepared once: converted properties and the index of which fields gate which. */
interface Compiled {
  base: Omit<Projection, "inputSchema" | "filteredBy" | "ignored" | "unresolved" | "conditionalFields" | "dynamicFields">;
  props: Record<string, PropertyDef>;
  names: string[];
  projected: Record<string, ProjectedProperty>;
  /** Top-level fields that gate at least one other top-level field. */
  gates: Set<string>;
  dynamic: Set<string>;
}

const compiledCache = new WeakMap<object, Compiled>();

function compile(piece: PieceDef, def: ActionDef | TriggerDef, kind: "action" | "trigger"): Compiled {
  let compiled = compiledCache.get(def);
  if (compiled && compiled.base.pieceVersion === piece.version && compiled.base.pieceId === piece.id) return compiled;
  const props = def.props ?? {};
  const names = Object.keys(props);
  const gates = new Set<string>();
  for (const name of names) for (const c of props[name].displayConditions ?? []) if (c.field in props) gates.add(c.field);
  compiled = {
    base: {
      pieceId: piece.id,
      pieceVersion: piece.version,
      id: def.id,
      name: def.name,
      description: def.description ?? "",
      sideEffects: kind === "action" ? ((def as ActionDef).sideEffects ?? "") : "",
      outputSchema: toObjectSchema(kind === "action" ? (def as ActionDef).outputSchema : undefined),
      sampleData: def.sampleData ?? {},
    },
    props,
    names,
    projected: Object.fromEntries(names.map((n) => [n, toProjectedProperty(props[n])])),
    gates,
    dynamic: new Set(names.filter((n) => typeof props[n].options === "function" || props[n].propertyType === "dropdown")),
  };
  compiledCache.set(def, compiled);
  return compiled;
}

/** Query values as text; a repeated key joins into a comma-separated list (what a contains_any gate takes). */
export type QueryValues = Record<string, string | string[] | undefined>;

const text = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(",") : (value ?? ""));

/**
 * Narrows a step's schema by the supplied gate values (docs/pieces.md "Schema projections", rules 1–6):
 * a supplied gate drops the properties it rules out; an unsupplied gate keeps its properties but lists
 * them in conditionalFields (and out of `required`); only top-level properties are ever filtered.
 */
export function project(piece: PieceDef, def: ActionDef | TriggerDef, kind: "action" | "trigger", query: QueryValues): Projection {
  const c = compile(piece, def, kind);
  const filteredBy: Record<string, string> = {};
  const ignored: string[] = [];
  const supplied = new Map<string, unknown>();
  for (const key of Object.keys(query)) {
    if (RESERVED_QUERY_KEYS.has(key)) continue;
    // A key gates only when it names a top-level property that some other property depends on.
    if (!c.gates.has(key)) {
      ignored.push(key);
      continue;
    }
    const raw = text(query[key]);
    filteredBy[key] = raw;
    supplied.set(key, coerceToProperty(raw, c.props[key]));
  }

  const dropped = new Set<string>();
  // Fixed point: a dropped gate counts as absent for the fields it gates, so chains of gates resolve.
  for (let changed = true, pass = 0; changed && pass <= c.names.length; pass++) {
    changed = false;
    for (const name of c.names) {
      if (dropped.has(name)) continue;
      for (const condition of c.props[name].displayConditions ?? []) {
        const field = condition.field;
        if (!supplied.has(field) && !dropped.has(field)) continue;
        const value = dropped.has(field) ? undefined : supplied.get(field);
        if (!conditionHolds(condition, value, c.props[field])) {
          dropped.add(name);
          changed = true;
          break;
        }
      }
    }
  }

  const properties: Record<string, ProjectedProperty> = {};
  const required: string[] = [];
  const conditionalFields: string[] = [];
  const unresolved = new Set<string>();
  const dynamicFields: string[] = [];
  for (const name of c.names) {
    if (dropped.has(name)) continue;
    properties[name] = c.projected[name];
    let conditional = false;
    for (const condition of c.props[name].displayConditions ?? []) {
      if (!supplied.has(condition.field) && !dropped.has(condition.field)) {
        conditional = true;
        unresolved.add(condition.field);
      }
    }
    if (conditional) conditionalFields.push(name);
    else if (c.props[name].required) required.push(name);
    if (c.dynamic.has(name)) dynamicFields.push(name);
  }
  return {
    ...c.base,
    inputSchema: { type: "object", properties, required },
    filteredBy,
    ignored,
    unresolved: c.names.filter((n) => unresolved.has(n)),
    conditionalFields,
    dynamicFields,
  };
}

/** Legal gate fields and values of a step (the summary's `discriminators`; projection rule 6). */
export function discriminators(props: Record<string, PropertyDef>): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const prop of Object.values(props)) {
    for (const condition of prop.displayConditions ?? []) {
      const gate = props[condition.field];
      if (!gate) continue;
      out[condition.field] ??= [];
      const values = out[condition.field];
      const legal = gate.enum ?? gate.items?.enum ?? (gate.type === "boolean" ? [true, false] : undefined);
      const candidates =
        legal ??
        (condition.operator === "contains_any"
          ? Array.isArray(condition.values)
            ? condition.values
            : Array.isArray(condition.value)
              ? condition.value
              : String(condition.value ?? "")
                  .split(",")
                  .map((s) => s.trim())
                  .filter(Boolean)
          : condition.value !== undefined
            ? [condition.value]
            : []);
      for (const v of candidates) if (!values.some((x) => x === v)) values.push(v);
    }
  }
  return out;
}
