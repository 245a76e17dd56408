/**
 * Workflows as files (docs/workflows-as-code.md): the YAML format, version 1, both ways. Pure: no storage here;
 * ./files.ts reads the workspace, writes it back and checks each definition with the gate.
 *
 * One workflow per file, keys in a fixed order, every free-form object's keys sorted, multi-line text as block
 * scalars, no folding (`lineWidth: 0`): the same workflow always gives the same bytes. The step chain is a list
 * (`steps`), so adding a step is a local diff instead of re-indenting every step after it.
 */
import { isAlias, isMap, isSeq, parseDocument, stringify, type Document, type Node as YamlNode } from "yaml";
import type { ActionNodeT, FlowVersionT, TriggerNodeT } from "../../schema/workflow";

export const FORMAT_VERSION = 1;
export const CONNECTIONS_FILE = "connections.yaml";
export const WORKFLOWS_DIR = "workflows";
export const VARIABLES_DIR = "variables";
/** Weft keeps one set of stored variables per workflow, for test and production runs alike (the run list's word for both). */
export const VARIABLES_FILE = `${VARIABLES_DIR}/all.yaml`;

/** A problem found in a file: which file, where in it (a dotted path, or `line:column`), and what is wrong. */
export interface FileProblem {
  file: string;
  path: string;
  message: string;
}

export interface StoredVariable {
  name: string;
  /** Absent for a secret: secret values never leave. */
  value?: unknown;
  secret: boolean;
  description: string;
}

/** One workflow as the format carries it; connection ids are replaced by the connection's name. */
export interface WorkflowFile {
  id?: string;
  name: string;
  description: string;
  tags: string[];
  /** The folder's name; null outside any folder. */
  folder: string | null;
  definition: FlowVersionT;
  /** Node (in `definition`) → the connection it names; ./files.ts turns names into this workspace's ids. */
  connections: Map<TriggerNodeT | ActionNodeT, string>;
  testPayloads: Record<string, unknown>;
  pinnedData: Record<string, unknown>;
  /** Definition path of each node (`trigger.nextAction.branches.0.firstAction`) → its path in the file (`steps.0.branches.0.steps.0`). */
  paths: Map<string, string>;
}

const YAML_OPTIONS = { lineWidth: 0, blockQuote: "literal", indent: 2, indentSeq: true, aliasDuplicateObjects: false } as const;

/** The YAML text of a value whose key order is already the one to write. */
export function renderYaml(value: unknown): string {
  return stringify(value, YAML_OPTIONS);
}

/** A copy with every object's keys sorted (free-form content: config, payloads, pinned data), so equal content gives equal text. */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) out[key] = sortedKeys(item);
  }
  return out;
}

const isEmptyObject = (value: unknown) => value === undefined || (typeof value === "object" && value !== null && Object.keys(value).length === 0);

// ------------------------------------------------------------------ paths

/** `workflows/<folder>/<slug>.yaml`: the file name of a workflow's name (letters and digits of any script kept). */
export function slugOf(name: string): string {
  const slug = name
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 80)
    .replace(/-+$/, "");
  return slug || "workflow";
}

/** A folder's directory: its name, with what a file system or a shell would misread written as %XX. */
export function folderDirOf(name: string): string {
  const encoded = [...name].map((ch) => (/^[\p{L}\p{N} _\-+,;=@()[\]{}'!&~.]$/u.test(ch) ? ch : percent(ch))).join("");
  // A leading dot would hide the directory; a space at either end is lost by many tools.
  return encoded.replace(/^[ .]|[ ]$/g, (ch) => percent(ch));
}

const percent = (ch: string) => [...Buffer.from(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");

/** The folder name a directory stands for (folderDirOf reversed); undefined when its %XX escapes are not UTF-8. */
export function folderNameOf(dir: string): string | undefined {
  try {
    return decodeURIComponent(dir.replace(/%(?![0-9A-Fa-f]{2})/g, "%25"));
  } catch {
    return undefined;
  }
}

/** Each workflow's file path: `workflows/[<folder>/]<slug>.yaml`, a clash inside one folder numbered in id order. */
export function workflowPaths(workflows: Array<{ id: string; name: string; folder: string | null }>): Map<string, string> {
  const sorted = [...workflows].sort((a, b) => a.id.localeCompare(b.id));
  const taken = new Set<string>();
  const paths = new Map<string, string>();
  for (const w of sorted) {
    const dir = w.folder === null ? WORKFLOWS_DIR : `${WORKFLOWS_DIR}/${folderDirOf(w.folder)}`;
    const slug = slugOf(w.name);
    let path = `${dir}/${slug}.yaml`;
    for (let n = 2; taken.has(path.toLowerCase()); n++) path = `${dir}/${slug}-${n}.yaml`;
    taken.add(path.toLowerCase());
    paths.set(w.id, path);
  }
  return paths;
}

/** The key of a workflow in variables/all.yaml: its path under workflows/, without `.yaml`. */
export const variablesKeyOf = (path: string) => path.slice(WORKFLOWS_DIR.length + 1).replace(/\.yaml$/, "");

// ------------------------------------------------------------------ writing

export interface WorkflowForExport {
  id: string;
  name: string;
  description: string;
  tags: string[];
  definition: FlowVersionT;
  /** Connection id → name; a step whose connection is gone is written without one. */
  connectionName: (id: string) => string | undefined;
  testPayloads: Record<string, unknown>;
  /** Pins of steps the draft has (a pin of a removed step is not carried). */
  pinnedData: Record<string, unknown>;
}

/** A workflow file's text. */
export function workflowYaml(w: WorkflowForExport): string {
  const d = w.definition;
  const doc: Record<string, unknown> = { weftFormat: FORMAT_VERSION, id: w.id, name: w.name };
  if (w.description !== "") doc.description = w.description;
  if (w.tags.length > 0) doc.tags = [...w.tags];
  if (!isEmptyObject(d.settings)) doc.settings = sortedKeys(d.settings);
  if (!isEmptyObject(d.variables)) doc.variables = sortedKeys(d.variables);
  if (d.annotations !== undefined && d.annotations !== null) doc.annotations = sortedKeys(d.annotations);
  const { nextAction, ...trigger } = d.trigger;
  doc.trigger = nodeDoc(trigger, w.connectionName);
  if (nextAction) doc.steps = chainDoc(nextAction, w.connectionName);
  if (!isEmptyObject(w.testPayloads)) doc.testPayloads = sortedKeys(w.testPayloads);
  if (!isEmptyObject(w.pinnedData)) doc.pinnedData = sortedKeys(w.pinnedData);
  return renderYaml(doc);
}

function chainDoc(first: ActionNodeT, connectionName: (id: string) => string | undefined): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let node: ActionNodeT | undefined = first; node; node = node.nextAction) out.push(nodeDoc(node, connectionName));
  return out;
}

/** A node's keys in the format's order; `valid` (derived) and `webhookToken` (server-owned) are not carried. */
function nodeDoc(node: TriggerNodeT | ActionNodeT, connectionName: (id: string) => string | undefined): Record<string, unknown> {
  const n = node as ActionNodeT;
  const out: Record<string, unknown> = { name: n.name };
  if (n.displayName !== undefined) out.displayName = n.displayName;
  out.type = n.type;
  if (n.pieceId !== undefined) out.pieceId = n.pieceId;
  if (n.pieceVersion !== undefined) out.pieceVersion = n.pieceVersion;
  if (n.actionId !== undefined) out.actionId = n.actionId;
  const connection = n.connectionId ? connectionName(n.connectionId) : undefined;
  if (connection !== undefined) out.connection = connection;
  if (n.skip !== undefined) out.skip = n.skip;
  if (n.config !== undefined && !isEmptyObject(n.config)) out.config = sortedKeys(n.config);
  if (n.branches) {
    out.branches = n.branches.map((b) => {
      const branch: Record<string, unknown> = { name: b.name, conditions: b.conditions.map((group) => group.map(conditionDoc)) };
      if (b.firstAction) branch.steps = chainDoc(b.firstAction, connectionName);
      return branch;
    });
  }
  if (n.firstLoopAction) out.loop = chainDoc(n.firstLoopAction, connectionName);
  if (n.onErrorAction) out.onError = chainDoc(n.onErrorAction, connectionName);
  return out;
}

function conditionDoc(c: { field: unknown; operator: string; value?: unknown }) {
  const out: Record<string, unknown> = { field: sortedKeys(c.field), operator: c.operator };
  if (c.value !== undefined) out.value = sortedKeys(c.value);
  return out;
}

/** connections.yaml: every connection of the workspace by name and piece; never a value. */
export function connectionsYaml(connections: Array<{ name: string; pieceId: string }>): string {
  const sorted = [...connections].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return renderYaml({ weftFormat: FORMAT_VERSION, connections: sorted.map((c) => ({ name: c.name, piece: c.pieceId })) });
}

/** variables/all.yaml: each workflow's stored variables, by the workflow's path; a secret's value is never written. */
export function variablesYaml(byKey: Map<string, StoredVariable[]>): string {
  const variables: Record<string, unknown> = {};
  for (const key of [...byKey.keys()].sort()) {
    const list = byKey.get(key)!;
    if (list.length === 0) continue;
    variables[key] = [...list]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((v) => {
        const out: Record<string, unknown> = { name: v.name };
        if (v.secret) out.secret = true;
        else out.value = sortedKeys(v.value);
        if (v.description !== "") out.description = v.description;
        return out;
      });
  }
  return renderYaml({ weftFormat: FORMAT_VERSION, variables });
}

// ------------------------------------------------------------------ reading

/** Parses YAML text; its syntax errors become problems with `line:column`. */
export function parseYaml(file: string, text: string, problems: FileProblem[]): unknown {
  const doc: Document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    for (const error of doc.errors) {
      const at = error.linePos?.[0];
      problems.push({ file, path: at ? `line ${at.line}:${at.col}` : "(file)", message: error.message.split("\n")[0] });
    }
    return undefined;
  }
  const unresolved = firstAliasOrTag(doc.contents);
  if (unresolved) {
    problems.push({ file, path: "(file)", message: `${unresolved} are not part of the format; write the value out` });
    return undefined;
  }
  return doc.toJS({ maxAliasCount: 0 });
}

/** Anchors, aliases and custom tags make a reviewer look elsewhere for a value: the format has none. */
function firstAliasOrTag(node: YamlNode | null | unknown): string | undefined {
  if (!node || typeof node !== "object") return undefined;
  const n = node as { anchor?: string; tag?: string; type?: string; items?: unknown[]; key?: unknown; value?: unknown };
  if (isAlias(node)) return "aliases (*name)";
  if (n.anchor) return "anchors (&name)";
  if (n.tag && !n.tag.startsWith("tag:yaml.org,2002:")) return `tags (${n.tag})`;
  if (isMap(node) || isSeq(node)) {
    for (const item of n.items ?? []) {
      const pair = item as { key?: unknown; value?: unknown };
      const found = isMap(node) ? (firstAliasOrTag(pair.key) ?? firstAliasOrTag(pair.value)) : firstAliasOrTag(item);
      if (found) return found;
    }
  }
  return undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function checkVersion(file: string, doc: Record<string, unknown>, problems: FileProblem[]): boolean {
  if (doc.weftFormat === FORMAT_VERSION) return true;
  problems.push({
    file,
    path: "weftFormat",
    message:
      doc.weftFormat === undefined
        ? `weftFormat is missing; this Weft reads format ${FORMAT_VERSION} (write weftFormat: ${FORMAT_VERSION} first)`
        : `weftFormat ${JSON.stringify(doc.weftFormat)} is not a format this Weft reads; it reads ${FORMAT_VERSION}`,
  });
  return false;
}

/** A file's top: a mapping of the format this Weft reads, or undefined with the problem listed (`shape` says what the file should be). */
function readFormatFile(file: string, text: string, problems: FileProblem[], shape: string): Record<string, unknown> | undefined {
  const before = problems.length;
  const doc = parseYaml(file, text, problems);
  if (problems.length > before) return undefined;
  if (!isRecord(doc)) {
    problems.push({ file, path: "(file)", message: shape });
    return undefined;
  }
  return checkVersion(file, doc, problems) ? doc : undefined;
}

function unknownKeys(file: string, path: string, value: Record<string, unknown>, allowed: readonly string[], problems: FileProblem[]) {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      problems.push({ file, path: path ? `${path}.${key}` : key, message: `unknown key "${key}"; allowed here: ${allowed.join(", ")}` });
  }
}

const TOP_KEYS = [
  "weftFormat",
  "id",
  "name",
  "description",
  "tags",
  "settings",
  "variables",
  "annotations",
  "trigger",
  "steps",
  "testPayloads",
  "pinnedData",
] as const;
const NODE_KEYS = [
  "name",
  "displayName",
  "type",
  "pieceId",
  "pieceVersion",
  "actionId",
  "connection",
  "skip",
  "config",
  "branches",
  "loop",
  "onError",
] as const;
const TRIGGER_KEYS = ["name", "displayName", "type", "pieceId", "pieceVersion", "actionId", "connection", "config"] as const;
const BRANCH_KEYS = ["name", "conditions", "steps"] as const;

/**
 * A workflow file read back into a definition (connection names kept aside), or undefined with its problems
 * listed. Only the format's own shape is checked here; the definition is the gate's (./files.ts runs it).
 */
export function readWorkflowFile(file: string, text: string, folder: string | null, problems: FileProblem[]): WorkflowFile | undefined {
  const before = problems.length;
  const doc = readFormatFile(file, text, problems, "a workflow file is a mapping that starts with weftFormat, id, name and trigger");
  if (!doc) return undefined;
  unknownKeys(file, "", doc, TOP_KEYS, problems);
  if (doc.id !== undefined && (typeof doc.id !== "string" || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(doc.id)))
    problems.push({ file, path: "id", message: "id is a workflow id (a uuid, as exported); leave it out to import the file as a new workflow" });
  if (typeof doc.name !== "string" || doc.name.trim() === "" || doc.name.length > 200)
    problems.push({ file, path: "name", message: "name is required: a text of 1 to 200 characters" });
  if (doc.description !== undefined && typeof doc.description !== "string") problems.push({ file, path: "description", message: "description is a text" });
  const tags = doc.tags ?? [];
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== "string" || t === "" || t.length > 50) || new Set(tags).size !== tags.length)
    problems.push({ file, path: "tags", message: "tags is a list of distinct texts of 1 to 50 characters" });
  for (const key of ["settings", "variables", "testPayloads", "pinnedData"] as const) {
    if (doc[key] !== undefined && !isRecord(doc[key])) problems.push({ file, path: key, message: `${key} is a mapping` });
  }
  if (doc.steps !== undefined && !Array.isArray(doc.steps)) problems.push({ file, path: "steps", message: "steps is a list of steps" });
  if (!isRecord(doc.trigger)) {
    problems.push({ file, path: "trigger", message: "trigger is required: a mapping with name and type (e.g. type: manual)" });
    return undefined;
  }
  const connections = new Map<TriggerNodeT | ActionNodeT, string>();
  const paths = new Map<string, string>();
  const reader = new NodeReader(file, problems, connections, paths);
  const trigger = reader.node(doc.trigger, "trigger", "trigger", TRIGGER_KEYS) as TriggerNodeT;
  const steps = Array.isArray(doc.steps) ? reader.chain(doc.steps, "steps", "trigger.nextAction") : undefined;
  if (steps) trigger.nextAction = steps;
  if (problems.length > before) return undefined;
  const definition: FlowVersionT = { schemaVersion: 2, trigger };
  if (doc.settings !== undefined) definition.settings = doc.settings as FlowVersionT["settings"];
  if (doc.variables !== undefined) definition.variables = doc.variables as Record<string, unknown>;
  if (doc.annotations !== undefined) definition.annotations = doc.annotations;
  return {
    id: typeof doc.id === "string" ? doc.id.toLowerCase() : undefined,
    name: doc.name as string,
    description: (doc.description as string | undefined) ?? "",
    tags: tags as string[],
    folder,
    definition,
    connections,
    testPayloads: (doc.testPayloads as Record<string, unknown> | undefined) ?? {},
    pinnedData: (doc.pinnedData as Record<string, unknown> | undefined) ?? {},
    paths,
  };
}

/** Turns the format's step lists back into the definition's chains, remembering where each node came from. */
class NodeReader {
  constructor(
    private readonly file: string,
    private readonly problems: FileProblem[],
    private readonly connections: Map<TriggerNodeT | ActionNodeT, string>,
    private readonly paths: Map<string, string>,
  ) {}

  chain(list: unknown[], filePath: string, definitionPath: string): ActionNodeT | undefined {
    let first: ActionNodeT | undefined;
    let last: ActionNodeT | undefined;
    list.forEach((item, i) => {
      const node = this.node(item, `${filePath}.${i}`, i === 0 ? definitionPath : `${definitionPath}${".nextAction".repeat(i)}`, NODE_KEYS) as ActionNodeT;
      if (last) last.nextAction = node;
      else first = node;
      last = node;
    });
    return first;
  }

  node(value: unknown, filePath: string, definitionPath: string, allowed: readonly string[]): TriggerNodeT | ActionNodeT {
    this.paths.set(definitionPath, filePath);
    if (!isRecord(value)) {
      this.problems.push({ file: this.file, path: filePath, message: "a step is a mapping with at least name and type" });
      return { name: "", type: "" };
    }
    unknownKeys(this.file, filePath, value, allowed, this.problems);
    const { connection, branches, loop, onError, ...own } = value;
    const node = { ...own } as ActionNodeT;
    if (connection !== undefined) {
      if (typeof connection === "string" && connection !== "") this.connections.set(node, connection);
      else
        this.problems.push({
          file: this.file,
          path: `${filePath}.connection`,
          message: "connection is the name of a connection (connections.yaml lists them)",
        });
    }
    if (branches !== undefined) {
      if (!Array.isArray(branches))
        this.problems.push({ file: this.file, path: `${filePath}.branches`, message: "branches is a list of {name, conditions, steps}" });
      else node.branches = branches.map((b, i) => this.branch(b, `${filePath}.branches.${i}`, `${definitionPath}.branches.${i}`));
    }
    for (const [key, list, field] of [
      ["loop", loop, "firstLoopAction"],
      ["onError", onError, "onErrorAction"],
    ] as const) {
      if (list === undefined) continue;
      if (!Array.isArray(list)) this.problems.push({ file: this.file, path: `${filePath}.${key}`, message: `${key} is a list of steps` });
      else if (list.length > 0) node[field] = this.chain(list, `${filePath}.${key}`, `${definitionPath}.${field}`);
    }
    return node;
  }

  private branch(value: unknown, filePath: string, definitionPath: string): NonNullable<ActionNodeT["branches"]>[number] {
    if (!isRecord(value)) {
      this.problems.push({ file: this.file, path: filePath, message: "a branch is a mapping with name, conditions and steps" });
      return { name: "", conditions: [] };
    }
    unknownKeys(this.file, filePath, value, BRANCH_KEYS, this.problems);
    const { steps, ...rest } = value;
    const branch = { ...rest } as NonNullable<ActionNodeT["branches"]>[number];
    if (steps !== undefined) {
      if (!Array.isArray(steps)) this.problems.push({ file: this.file, path: `${filePath}.steps`, message: "steps is a list of steps" });
      else if (steps.length > 0) branch.firstAction = this.chain(steps, `${filePath}.steps`, `${definitionPath}.firstAction`);
    }
    return branch;
  }
}

/** A definition path the gate names (`trigger.nextAction.config.url`) as the path in the file (`steps.0.config.url`). */
export function filePathOf(definitionPath: string, paths: Map<string, string>): string {
  let best = "";
  for (const key of paths.keys()) {
    if ((definitionPath === key || definitionPath.startsWith(`${key}.`)) && key.length > best.length) best = key;
  }
  if (!best) return definitionPath;
  const rest = definitionPath.slice(best.length).replace(/^\.connectionId\b/, ".connection");
  return `${paths.get(best)}${rest}`;
}

/** connections.yaml read back: names and pieces. */
export function readConnectionsFile(text: string, problems: FileProblem[]): Array<{ name: string; pieceId: string }> {
  const file = CONNECTIONS_FILE;
  const doc = readFormatFile(file, text, problems, "connections.yaml is a mapping: weftFormat and connections");
  if (!doc) return [];
  unknownKeys(file, "", doc, ["weftFormat", "connections"], problems);
  const list = doc.connections ?? [];
  if (!Array.isArray(list)) {
    problems.push({ file, path: "connections", message: "connections is a list of {name, piece}" });
    return [];
  }
  const out: Array<{ name: string; pieceId: string }> = [];
  list.forEach((item, i) => {
    if (!isRecord(item) || typeof item.name !== "string" || item.name === "" || typeof item.piece !== "string" || item.piece === "") {
      problems.push({ file, path: `connections.${i}`, message: "each connection is {name, piece}: its name and the id of its piece; never a credential" });
      return;
    }
    unknownKeys(file, `connections.${i}`, item, ["name", "piece"], problems);
    if (out.some((c) => c.name === item.name)) problems.push({ file, path: `connections.${i}.name`, message: `connection "${item.name}" is listed twice` });
    else out.push({ name: item.name, pieceId: item.piece });
  });
  return out;
}

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** variables/all.yaml read back: workflow key → its stored variables (a secret without a value). */
export function readVariablesFile(file: string, text: string, problems: FileProblem[]): Map<string, StoredVariable[]> {
  const out = new Map<string, StoredVariable[]>();
  const doc = readFormatFile(file, text, problems, "a variables file is a mapping: weftFormat and variables");
  if (!doc) return out;
  unknownKeys(file, "", doc, ["weftFormat", "variables"], problems);
  const byKey = doc.variables ?? {};
  if (!isRecord(byKey)) {
    problems.push({ file, path: "variables", message: "variables maps a workflow's path under workflows/ (without .yaml) to its list of variables" });
    return out;
  }
  for (const [key, list] of Object.entries(byKey)) {
    if (!Array.isArray(list)) {
      problems.push({ file, path: `variables.${key}`, message: "a list of {name, value, description} or {name, secret: true, description}" });
      continue;
    }
    const variables: StoredVariable[] = [];
    list.forEach((item, i) => {
      const path = `variables.${key}.${i}`;
      if (!isRecord(item) || typeof item.name !== "string" || !VARIABLE_NAME.test(item.name)) {
        problems.push({ file, path: `${path}.name`, message: "name is required: letters, digits and _, not starting with a digit, at most 64" });
        return;
      }
      unknownKeys(file, path, item, ["name", "value", "secret", "description"], problems);
      const secret = item.secret === true;
      if (item.secret !== undefined && typeof item.secret !== "boolean") problems.push({ file, path: `${path}.secret`, message: "secret is true or false" });
      if (secret && item.value !== undefined)
        problems.push({
          file,
          path: `${path}.value`,
          message: `secret variable "${item.name}" carries a value; secret values never go in files: set it in Weft`,
        });
      if (!secret && item.value === undefined)
        problems.push({ file, path: `${path}.value`, message: `variable "${item.name}" needs a value (or secret: true)` });
      if (item.description !== undefined && (typeof item.description !== "string" || item.description.length > 500))
        problems.push({ file, path: `${path}.description`, message: "description is a text of at most 500 characters" });
      if (variables.some((v) => v.name === item.name)) problems.push({ file, path: `${path}.name`, message: `variable "${item.name}" appears twice` });
      variables.push({ name: item.name, value: secret ? undefined : item.value, secret, description: (item.description as string | undefined) ?? "" });
    });
    if (variables.length > 200) problems.push({ file, path: `variables.${key}`, message: "at most 200 variables per workflow" });
    out.set(key, variables);
  }
  return out;
}
