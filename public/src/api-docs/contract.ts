/**
 * What the API reference reads from the OpenAPI document at /api/openapi.json: the operations in tag
 * order, a search over them, an example value for any schema (the contract gives none, so one is made
 * from the schema), and the same-origin request "Try it" sends. No DOM here, so it is tested directly.
 */

export interface JsonSchema {
  type?: string | string[];
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  minimum?: number;
  $ref?: string;
  $id?: string;
}

export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}

interface MediaType {
  schema?: JsonSchema;
  example?: unknown;
}

export interface Operation {
  tags?: string[];
  summary?: string;
  description?: string;
  "x-permission"?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, MediaType> };
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>;
}

export interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface OperationEntry {
  /** Stable anchor, e.g. "op-get-api-runs-id". */
  id: string;
  method: string;
  path: string;
  tag: string;
  scope: string;
  operation: Operation;
}

export interface TagGroup {
  name: string;
  description: string;
  operations: OperationEntry[];
}

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];

export const operationId = (method: string, path: string) => `op-${method}-${path.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "")}`.toLowerCase();

/** Every operation, grouped by its first tag in the document's tag order (unknown tags last). */
export function groupByTag(doc: OpenApiDocument): TagGroup[] {
  const groups = new Map<string, TagGroup>();
  for (const tag of doc.tags ?? []) groups.set(tag.name, { name: tag.name, description: tag.description ?? "", operations: [] });
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!METHODS.includes(method)) continue;
      const tag = operation.tags?.[0] ?? "Other";
      if (!groups.has(tag)) groups.set(tag, { name: tag, description: "", operations: [] });
      groups.get(tag)?.operations.push({ id: operationId(method, path), method, path, tag, scope: operation["x-permission"] ?? "", operation });
    }
  }
  return [...groups.values()].filter((group) => group.operations.length > 0);
}

/** Whether every word of `query` appears in the operation's method, path, summary, tag or scope. */
export function matches(entry: OperationEntry, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = `${entry.method} ${entry.path} ${entry.operation.summary ?? ""} ${entry.tag} ${entry.scope}`.toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** The groups narrowed to the operations `query` matches; groups left empty are dropped. */
export function search(groups: TagGroup[], query: string): TagGroup[] {
  return groups
    .map((group) => ({ ...group, operations: group.operations.filter((entry) => matches(entry, query)) }))
    .filter((group) => group.operations.length > 0);
}

/** What a scope means for the caller, in words. */
export function describeScope(scope: string): string {
  if (scope === "public") return "none: anyone may call it";
  if (scope === "authenticated") return "any valid token or session";
  return `a token with the ${scope} scope`;
}

const schemaIndexes = new WeakMap<OpenApiDocument, Map<string, JsonSchema>>();

/** Schemas the document names: components by their #/components/schemas/ path, inline ones by their $id. */
function schemaIndex(doc: OpenApiDocument): Map<string, JsonSchema> {
  let index = schemaIndexes.get(doc);
  if (index) return index;
  const found = new Map<string, JsonSchema>();
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) found.set(`#/components/schemas/${name}`, schema);
  const walk = (value: unknown) => {
    if (Array.isArray(value)) for (const item of value) walk(item);
    else if (value && typeof value === "object") {
      const id = (value as JsonSchema).$id;
      if (typeof id === "string" && !found.has(id)) found.set(id, value as JsonSchema);
      for (const child of Object.values(value)) walk(child);
    }
  };
  walk(doc.paths);
  index = found;
  schemaIndexes.set(doc, index);
  return index;
}

/** The schema a $ref points at (a component path, or an inline schema's $id), or undefined. */
export function resolveRef(doc: OpenApiDocument, ref: string): JsonSchema | undefined {
  const index = schemaIndex(doc);
  return index.get(ref) ?? index.get(ref.slice(ref.lastIndexOf("/") + 1));
}

const FORMAT_EXAMPLES: Record<string, string> = {
  "date-time": "2025-01-31T09:30:00.000Z",
  date: "2025-01-31",
  uuid: "3f6c2a9e-8b1d-4c7a-9e2f-5d4b3a2c1e0f",
  email: "ada@example.com",
  uri: "https://example.com/",
};
const MAX_DEPTH = 8;

interface ExampleOptions {
  /** Leave optional properties out (request bodies: the smallest body that is accepted). */
  requiredOnly?: boolean;
}

/**
 * A value that fits `schema`: its own example, const, default or first enum value when it has one,
 * otherwise one made from its type (a recursive $ref is expanded once; optional properties that
 * would recurse are left out). Undefined only where recursion was cut.
 */
export function exampleFor(doc: OpenApiDocument, schema: JsonSchema | undefined, options: ExampleOptions = {}, seen: string[] = []): unknown {
  if (!schema || typeof schema !== "object") return null;
  if ("example" in schema) return schema.example;
  if (schema.examples?.length) return schema.examples[0];
  if ("const" in schema) return schema.const;
  if ("default" in schema) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  if (seen.length > MAX_DEPTH) return undefined;
  if (schema.$ref) {
    if (seen.includes(schema.$ref)) return undefined;
    return exampleFor(doc, resolveRef(doc, schema.$ref), options, [...seen, schema.$ref]);
  }
  const within = schema.$id ? [...seen, schema.$id] : seen;
  if (schema.allOf?.length) {
    const parts = schema.allOf.map((part) => exampleFor(doc, part, options, within));
    return parts.every((part) => part && typeof part === "object" && !Array.isArray(part)) ? Object.assign({}, ...parts) : parts[0];
  }
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants?.length) {
    const nonNull = variants.filter((variant) => variant.type !== "null");
    for (const variant of nonNull.length > 0 ? nonNull : variants) {
      const value = exampleFor(doc, variant, options, within);
      if (value !== undefined) return value;
    }
    return null;
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ["object"] : [];
  const type = types.find((candidate) => candidate !== "null") ?? types[0];
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        if (options.requiredOnly && !required.has(key)) continue;
        const value = exampleFor(doc, property, options, within);
        if (value !== undefined) out[key] = value;
        else if (required.has(key)) out[key] = null;
      }
      return out;
    }
    case "array": {
      const item = exampleFor(doc, schema.items, options, within);
      return item === undefined ? [] : [item];
    }
    case "string":
      return (schema.format && FORMAT_EXAMPLES[schema.format]) ?? "string";
    case "integer":
    case "number":
      return schema.minimum ?? 0;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return null;
  }
}

/** The JSON media type of a body or response, if it has one. */
export const jsonContent = (content: Record<string, MediaType> | undefined): MediaType | undefined =>
  content?.["application/json"] ?? Object.entries(content ?? {}).find(([type]) => type.endsWith("+json"))?.[1];

/** The example shown for a response: the contract's own, else one made from the schema with every property. */
export function responseExample(doc: OpenApiDocument, media: MediaType | undefined): unknown {
  if (!media) return undefined;
  if ("example" in media) return media.example;
  return exampleFor(doc, media.schema);
}

/**
 * The example body of a request: the contract's own, else the required properties only, so that it is
 * accepted as it is; a body with no required property shows its top-level properties instead.
 */
export function requestExample(doc: OpenApiDocument, media: MediaType | undefined): unknown {
  if (!media) return undefined;
  if ("example" in media) return media.example;
  const minimal = exampleFor(doc, media.schema, { requiredOnly: true });
  const schema = media.schema?.$ref ? resolveRef(doc, media.schema.$ref) : media.schema;
  const isEmptyObject = minimal !== null && typeof minimal === "object" && !Array.isArray(minimal) && Object.keys(minimal).length === 0;
  if (!isEmptyObject || !schema?.properties) return minimal;
  const top: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties)) {
    const value = exampleFor(doc, property, { requiredOnly: true });
    if (value !== undefined) top[key] = value;
  }
  return top;
}

export interface TryRequest {
  url: string;
  init: RequestInit & { headers: Record<string, string> };
}

/**
 * The request "Try it" sends, always to `origin` (this server): path parameters filled in (each is
 * required), query parameters that have a value, the body when one is given (it must be JSON), and
 * the token as `Authorization: Bearer`. Throws an Error saying what to fix.
 */
export function buildTryRequest(entry: OperationEntry, input: { origin: string; values: Record<string, string>; body: string; token: string }): TryRequest {
  const parameters = entry.operation.parameters ?? [];
  const path = entry.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = input.values[name]?.trim();
    if (!value) throw new Error(`Fill in the path parameter "${name}".`);
    return encodeURIComponent(value);
  });
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const parameter of parameters) {
    const value = input.values[parameter.name];
    if (parameter.in === "path" || value === undefined || value === "") continue;
    if (parameter.in === "query") query.append(parameter.name, value);
    else if (parameter.in === "header") headers[parameter.name] = value;
  }
  const missing = parameters.find((parameter) => parameter.required && parameter.in !== "path" && !input.values[parameter.name]);
  if (missing) throw new Error(`Fill in the ${missing.in} parameter "${missing.name}".`);
  const url = new URL(path, input.origin);
  if (url.origin !== new URL(input.origin).origin) throw new Error("Try it only calls this server.");
  const search = query.toString();
  if (search) url.search = search;
  const init: TryRequest["init"] = { method: entry.method.toUpperCase(), headers, credentials: "omit" };
  if (input.token.trim()) headers.authorization = `Bearer ${input.token.trim()}`;
  if (input.body.trim()) {
    try {
      JSON.parse(input.body);
    } catch (error) {
      throw new Error(`The body is not valid JSON: ${(error as Error).message}`);
    }
    headers["content-type"] = "application/json";
    init.body = input.body;
  } else if (entry.operation.requestBody?.required) {
    throw new Error("This operation needs a request body.");
  }
  return { url: url.toString(), init };
}

/** The same request as a curl command, with the token left as $WEFT_TOKEN. */
export function curlCommand(request: TryRequest): string {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const parts = ["curl", "-X", request.init.method ?? "GET", quote(request.url)];
  for (const [name, value] of Object.entries(request.init.headers)) {
    parts.push("-H", name === "authorization" ? '"Authorization: Bearer $WEFT_TOKEN"' : quote(`${name}: ${value}`));
  }
  if (typeof request.init.body === "string") parts.push("--data", quote(request.init.body));
  return parts.join(" ");
}
