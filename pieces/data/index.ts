/** Data: shape JSON between steps without code. Every action is pure. */
import { action, definePiece, labelled, Property, Show } from "../../src/pieces-sdk";

/** Reads `a.b.0.c` from a value; undefined when any segment is missing. */
export function readPath(value: unknown, path: string): unknown {
  let current: unknown = value;
  for (const segment of path.split(".").filter(Boolean)) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function writePath(target: Record<string, unknown>, path: string, value: unknown) {
  const segments = path.split(".").filter(Boolean);
  let current: Record<string, unknown> = target;
  for (const segment of segments.slice(0, -1)) {
    if (current[segment] === null || typeof current[segment] !== "object") current[segment] = {};
    current = current[segment] as Record<string, unknown>;
  }
  current[segments[segments.length - 1]] = value;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function deepMerge(left: unknown, right: unknown): unknown {
  if (!isPlainObject(left) || !isPlainObject(right)) return right;
  const out: Record<string, unknown> = { ...left };
  for (const [key, value] of Object.entries(right)) out[key] = key in out ? deepMerge(out[key], value) : value;
  return out;
}

function asObject(value: unknown, name: string): Record<string, unknown> {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new Error(`${name} is text that is not JSON; pass an object`);
    }
  }
  if (!isPlainObject(value)) throw new Error(`${name} must be an object, got ${Array.isArray(value) ? "an array" : typeof value}`);
  return value;
}

export default definePiece({
  id: "data",
  name: "Data",
  version: "1.0.0",
  icon: "🗂️",
  description: "Set, parse, serialise, pick and merge JSON values",
  actions: [
    action({
      id: "set_fields",
      name: "Set fields",
      description: "Output an object built from the given fields; dotted names (a.b) create nested objects",
      sideEffects: "pure",
      props: {
        fields: Property.keyValue({ displayName: "Fields", description: "Name → value; values may be {{ expressions }}", required: true }),
      },
      outputSchema: { type: "object" },
      sampleData: { name: "Ada", total: 42 },
      run: ({ config }) => {
        const out: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(asObject(config.fields ?? {}, "fields"))) writePath(out, key, value);
        return out;
      },
    }),
    action({
      id: "parse_json",
      name: "Parse JSON",
      description: "Parse JSON text into a value",
      sideEffects: "pure",
      props: { text: Property.longText({ displayName: "JSON text", required: true }) },
      outputSchema: { type: "object", properties: { value: { type: "json" } } },
      sampleData: { value: { id: 1 } },
      run: ({ config }) => {
        const text = config.text;
        if (typeof text !== "string") return { value: text }; // already parsed by an expression
        try {
          return { value: JSON.parse(text) };
        } catch (error) {
          throw new Error(`text is not valid JSON: ${(error as Error).message}`);
        }
      },
    }),
    action({
      id: "to_json",
      name: "To JSON",
      description: "Serialise a value as JSON text",
      sideEffects: "pure",
      props: {
        value: Property.json({ displayName: "Value", required: true }),
        pretty: Property.checkbox({ displayName: "Pretty-print", default: false }),
        indent: Property.integer({ displayName: "Indent", default: 2, min: 1, max: 8, displayConditions: [Show.eq("pretty", true)] }),
      },
      outputSchema: { type: "object", properties: { json: { type: "string" } } },
      sampleData: { json: '{"id":1}' },
      run: ({ config }) => ({ json: JSON.stringify(config.value, null, config.pretty ? Number(config.indent ?? 2) : undefined) }),
    }),
    action({
      id: "pick",
      name: "Pick fields",
      description: "Keep only the listed (dotted) paths of an object",
      sideEffects: "pure",
      props: {
        object: Property.json({ displayName: "Object", required: true }),
        paths: Property.array({ displayName: "Paths", description: "e.g. id, customer.email", required: true, items: { type: "string" } }),
      },
      outputSchema: { type: "object" },
      sampleData: { id: 1, customer: { email: "ada@example.com" } },
      run: ({ config }) => {
        const source = asObject(config.object, "object");
        const paths = typeof config.paths === "string" ? config.paths.split(",").map((s: string) => s.trim()) : ((config.paths as string[]) ?? []);
        const out: Record<string, unknown> = {};
        for (const path of paths) {
          const value = readPath(source, String(path));
          if (value !== undefined) writePath(out, String(path), value);
        }
        return out;
      },
    }),
    action({
      id: "merge",
      name: "Merge objects",
      description: "Merge objects left to right; later keys win",
      sideEffects: "pure",
      props: {
        objects: Property.array({ displayName: "Objects", required: true, items: { type: "object" } }),
        mode: Property.staticDropdown({
          displayName: "Mode",
          default: "shallow",
          options: labelled({ shallow: "Shallow", deep: "Deep" }),
        }),
      },
      outputSchema: { type: "object" },
      sampleData: { id: 1, name: "Ada" },
      run: ({ config }) => {
        const list = config.objects;
        if (!Array.isArray(list)) throw new Error("objects must be an array of objects");
        const objects = list.map((o, i) => asObject(o, `objects[${i}]`));
        return config.mode === "deep" ? objects.reduce((a, b) => deepMerge(a, b) as Record<string, unknown>, {}) : Object.assign({}, ...objects);
      },
    }),
  ],
});
