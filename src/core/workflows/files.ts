/**
 * Workflows as files (docs/workflows-as-code.md): a workspace exported as a folder of YAML files
 * (./files-format.ts), and such a folder imported — every file checked first, by the format and by the one gate,
 * then everything applied in one storage unit, or nothing. An import writes drafts: it never publishes, and a live
 * workflow keeps running its published version until someone publishes the imported draft.
 */
import { AppError } from "../../http/errors";
import { newId } from "../../lib/ids";
import { isStorageError } from "../../lib/storage-error";
import { nowIso } from "../../store/db";
import type { ConnectionRow } from "../../store/connections";
import type { FolderRow } from "../../store/folders";
import type { Storage } from "../../store/port";
import type { WorkflowRow } from "../../store/workflows";
import type { WorkflowT } from "../../schema/workflow-record";
import type { ConnectionChoice, GateResult } from "./validate";
import {
  CONNECTIONS_FILE,
  connectionsYaml,
  filePathOf,
  folderNameOf,
  readConnectionsFile,
  readVariablesFile,
  readWorkflowFile,
  VARIABLES_DIR,
  VARIABLES_FILE,
  variablesKeyOf,
  variablesYaml,
  WORKFLOWS_DIR,
  workflowPaths,
  workflowYaml,
  type FileProblem,
  type StoredVariable,
  type WorkflowFile,
} from "./files-format";
import { assertWithinLimits, normalizeDefinition, shapeOf, stepsByName, walk } from "./tree";
import type { Actor, Workflows } from "./workflows";

/** What the import needs of the connections code (src/core/connections/service.ts serves it). */
export interface ConnectionBlanks {
  blankRow(actor: Actor, pieceId: string, name: string): ConnectionRow | string;
}

export type PlanAction = "create" | "update" | "unchanged" | "delete";
export interface PlanEntry {
  action: PlanAction;
  kind: "folder" | "connection" | "workflow";
  name: string;
  /** The file it comes from (workflows), or would have been written to (a workflow --prune deletes). */
  path?: string;
  id?: string;
}
export interface ImportResult {
  dryRun: boolean;
  /** True when the plan was applied (false for a dry run). */
  applied: boolean;
  plan: PlanEntry[];
  /** The gate's warnings, by file: they do not stop an import. */
  warnings: FileProblem[];
  /**
   * Secret variables the files name that their workflow holds no value for here: the import stores them empty (their
   * values are never in the files); set each with PUT /api/workflows/{id}/variables. Listed before anything changes.
   */
  secretsToSet: SecretToSet[];
}
export interface SecretToSet {
  /** The workflow's id and name, and its file. */
  id: string;
  workflow: string;
  path: string;
  /** The variable's name. */
  name: string;
}
export interface ImportOptions {
  dryRun?: boolean;
  /** Delete the workspace's workflows the folder does not hold. */
  prune?: boolean;
  /** May the caller create connections (connection:write)? A connection connections.yaml names and the workspace lacks is one. */
  mayCreateConnections?: boolean;
}

/** A checked workflow file, ready to be written. */
interface Prepared {
  path: string;
  file: WorkflowFile;
  id: string;
  folderName: string | null;
  variables: StoredVariable[];
  pins: Record<string, unknown>;
  result: GateResult;
  existing: WorkflowRow | null;
  action: PlanAction;
}

const PAGE = 500;

/** What a plan read moved on between two of its reads (another import committed meanwhile): plan again. */
class PlanOutdated extends Error {}

export class WorkflowFiles {
  constructor(
    private readonly workflows: Workflows,
    private readonly connections: ConnectionBlanks,
  ) {}

  private get storage(): Storage {
    return this.workflows.storage;
  }

  // ------------------------------------------------------------------ export

  /** The workspace as files: path → text, paths sorted. No credential, no secret value and no connection id is in them. */
  async export(workspaceId: string): Promise<Record<string, string>> {
    const rows = await this.allRows(workspaceId);
    const folderNames = new Map((await this.storage.folders.list(workspaceId)).map((f) => [f.id, f.name]));
    const connections = await this.allConnections(workspaceId);
    const names = new Map(connections.map((c) => [c.id, c.name]));
    const folderOf = (row: WorkflowRow) => (row.folder_id ? (folderNames.get(row.folder_id) ?? null) : null);
    const paths = workflowPaths(rows.map((r) => ({ id: r.id, name: r.name, folder: folderOf(r) })));
    const files: Record<string, string> = {};
    const variables = new Map<string, StoredVariable[]>();
    for (const row of rows) {
      const path = paths.get(row.id)!;
      const state = await this.stateOf(row);
      files[path] = workflowYaml({ ...state, connectionName: (id) => names.get(id) });
      variables.set(variablesKeyOf(path), state.variables);
    }
    files[CONNECTIONS_FILE] = connectionsYaml(connections);
    files[VARIABLES_FILE] = variablesYaml(variables);
    return Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** What a workflow's file and its variables say of it now. */
  private async stateOf(row: WorkflowRow, storage: Storage = this.storage) {
    const definition = this.workflows.draft(row);
    const steps = stepsByName(definition);
    const pinnedData: Record<string, unknown> = {};
    for (const pin of await storage.workflows.pins(row.id)) if (steps.has(pin.step_name)) pinnedData[pin.step_name] = JSON.parse(pin.data);
    const variables: StoredVariable[] = (await this.workflows.editor.exportVariables(row.id)).map((v) => ({
      name: v.name,
      value: v.secret ? undefined : v.value,
      secret: v.secret,
      description: v.description,
    }));
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      tags: JSON.parse(row.tags) as string[],
      definition,
      testPayloads: JSON.parse(row.test_payloads) as Record<string, unknown>,
      pinnedData,
      variables,
    };
  }

  private async allRows(workspaceId: string, storage: Storage = this.storage): Promise<WorkflowRow[]> {
    const rows: WorkflowRow[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await storage.workflows.list(workspaceId, {}, PAGE, offset);
      for (const listed of page.rows) {
        const row = await storage.workflows.get(workspaceId, listed.id);
        if (row) rows.push(row);
      }
      if (page.rows.length < PAGE) return rows;
    }
  }

  private async allConnections(workspaceId: string): Promise<Array<{ id: string; name: string; pieceId: string }>> {
    const out: Array<{ id: string; name: string; pieceId: string }> = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.storage.connections.list(workspaceId, {}, PAGE, offset);
      out.push(...page.rows.map((r) => ({ id: r.id, name: r.name, pieceId: r.piece_id })));
      if (page.rows.length < PAGE) return out;
    }
  }

  // ------------------------------------------------------------------ import

  /**
   * Imports a folder's files (path → text; paths outside connections.yaml, variables/ and workflows/ are ignored).
   * Every problem of every file is listed (400 VALIDATION_FAILED, `details.problems`) and nothing is written; a dry
   * run answers the plan and writes nothing; otherwise the plan is applied in one unit.
   *
   * Two imports of the same files at once (a git pull from its schedule and from its webhook, two people) both plan
   * to create what neither finds yet; the second unit then meets the first's rows and rolls back whole, or its plan
   * finds them between two of its reads (PlanOutdated). It is planned once more from what is stored then (what the first created is now an update or unchanged); a second clash answers
   * 409, nothing of this import written.
   */
  async import(actor: Actor, files: Record<string, string>, options: ImportOptions = {}): Promise<ImportResult> {
    const clashed = (error: unknown) => isStorageError(error, "unique") || error instanceof PlanOutdated;
    try {
      return await this.importOnce(actor, files, options);
    } catch (error) {
      if (!clashed(error)) throw error;
    }
    try {
      return await this.importOnce(actor, files, options);
    } catch (error) {
      if (!clashed(error)) throw error;
      throw new AppError(
        "CONFLICT",
        "nothing was imported: workflows, folders or connections of these files were being written by another import or edit at the same moment; import again",
      );
    }
  }

  private async importOnce(actor: Actor, files: Record<string, string>, options: ImportOptions): Promise<ImportResult> {
    const problems: FileProblem[] = [];
    const warnings: FileProblem[] = [];
    const workspaceId = actor.workspaceId;

    // 1. The files, by the format.
    const workflowFiles: Array<{ path: string; file: WorkflowFile }> = [];
    let listed: Array<{ name: string; pieceId: string }> = [];
    let variables = new Map<string, StoredVariable[]>();
    for (const [rawPath, text] of Object.entries(files)) {
      const path = rawPath.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
      if (typeof text !== "string") {
        problems.push({ file: path, path: "(file)", message: "the file's content is a text" });
        continue;
      }
      if (path === CONNECTIONS_FILE) listed = readConnectionsFile(text, problems);
      else if (path.startsWith(`${VARIABLES_DIR}/`)) {
        if (path === VARIABLES_FILE) variables = readVariablesFile(path, text, problems);
        else
          problems.push({
            file: path,
            path: "(file)",
            message: `Weft keeps one set of variables per workflow, for test and production runs alike: they go in ${VARIABLES_FILE}`,
          });
      } else if (path.startsWith(`${WORKFLOWS_DIR}/`)) {
        const parts = path.split("/");
        if (!path.endsWith(".yaml") || parts.length > 3 || parts.some((p) => p === "" || p === "." || p === "..")) {
          problems.push({ file: path, path: "(file)", message: "workflow files are workflows/<name>.yaml, or workflows/<folder>/<name>.yaml for a folder" });
          continue;
        }
        const folder = parts.length === 3 ? folderNameOf(parts[1]!) : null;
        if (folder === undefined || (folder !== null && folder.trim() === "")) {
          problems.push({ file: path, path: "(file)", message: `directory "${parts[1]}" is not a folder name (its %XX escapes are not UTF-8)` });
          continue;
        }
        const file = readWorkflowFile(path, text, folder, problems);
        if (file) workflowFiles.push({ path, file });
      }
    }
    workflowFiles.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const keys = new Set(workflowFiles.map((w) => variablesKeyOf(w.path)));
    for (const key of variables.keys()) {
      if (!keys.has(key)) problems.push({ file: VARIABLES_FILE, path: `variables.${key}`, message: `no workflow file ${WORKFLOWS_DIR}/${key}.yaml` });
    }
    const seenIds = new Map<string, string>();
    for (const { path, file } of workflowFiles) {
      if (!file.id) continue;
      const other = seenIds.get(file.id.toLowerCase());
      if (other) problems.push({ file: path, path: "id", message: `${other} has the same id; each workflow file has its own` });
      else seenIds.set(file.id.toLowerCase(), path);
    }

    // 2. Against this workspace: ids, folders, connections.
    const existingRows = new Map((await this.allRows(workspaceId)).map((r) => [r.id, r]));
    const existingConnections = await this.allConnections(workspaceId);
    const connectionByName = new Map(existingConnections.map((c) => [c.name, c]));
    const plan: PlanEntry[] = [];
    const newConnections: ConnectionRow[] = [];
    listed.forEach((c, i) => {
      const existing = connectionByName.get(c.name);
      if (existing) {
        if (existing.pieceId !== c.pieceId)
          problems.push({
            file: CONNECTIONS_FILE,
            path: `connections.${i}.piece`,
            message: `connection "${c.name}" of this workspace belongs to piece "${existing.pieceId}", not "${c.pieceId}"`,
          });
        return;
      }
      const row = this.connections.blankRow(actor, c.pieceId, c.name);
      if (options.mayCreateConnections === false)
        problems.push({
          file: CONNECTIONS_FILE,
          path: `connections.${i}`,
          message: `connection "${c.name}" is not in this workspace, and creating it needs the scope connection:write; create it first, or import with a token that has that scope`,
        });
      if (typeof row === "string") problems.push({ file: CONNECTIONS_FILE, path: `connections.${i}.piece`, message: row });
      else {
        newConnections.push(row);
        connectionByName.set(c.name, { id: row.id, name: c.name, pieceId: c.pieceId });
        plan.push({ action: "create", kind: "connection", name: c.name, id: row.id });
      }
    });
    const addedChoices = new Map<string, ConnectionChoice[]>();
    for (const row of newConnections) addedChoices.set(row.piece_id, [...(addedChoices.get(row.piece_id) ?? []), { id: row.id, name: row.name }]);
    const folders = new Map((await this.storage.folders.list(workspaceId)).map((f) => [f.name.toLowerCase(), f]));
    const fileIds = new Set<string>();
    for (const { file } of workflowFiles) if (file.id) fileIds.add(file.id);

    // 3. Each workflow: its connections, the limits, the gate.
    const prepared: Prepared[] = [];
    for (const { path, file } of workflowFiles) {
      const problemsBefore = problems.length;
      const existing = file.id ? (existingRows.get(file.id) ?? null) : null;
      const elsewhere = file.id && !existing ? await this.storage.workflows.getAnyWorkspace(file.id) : null;
      // In this workspace after all: another import committed it since this plan read the workspace's workflows.
      if (elsewhere?.workspace_id === workspaceId) throw new PlanOutdated();
      if (elsewhere) {
        problems.push({
          file: path,
          path: "id",
          message: `id ${file.id} belongs to a workflow of another workspace; leave id out to import this file as a new workflow`,
        });
        continue;
      }
      // A connection already reported here is not reported again by the gate (as a missing connectionId).
      const reported = new Set<string>();
      for (const [node, name] of file.connections) {
        const connection = connectionByName.get(name);
        const where = filePathOf(pathOfNode(file, node), file.paths);
        if (!connection || (node.pieceId && connection.pieceId !== node.pieceId)) reported.add(`${where}.connection`);
        if (!connection)
          problems.push({
            file: path,
            path: `${where}.connection`,
            message: `no connection named "${name}" in this workspace or in ${CONNECTIONS_FILE}; connections: ${[...connectionByName.keys()].join(", ") || "none"}`,
          });
        else if (node.pieceId && connection.pieceId !== node.pieceId)
          problems.push({
            file: path,
            path: `${where}.connection`,
            message: `connection "${name}" belongs to piece "${connection.pieceId}", not "${node.pieceId}"`,
          });
        else node.connectionId = connection.id;
      }
      const { definition } = normalizeDefinition(file.definition, this.workflows.pieces);
      try {
        assertWithinLimits(shapeOf(definition));
      } catch (error) {
        problems.push({ file: path, path: "(definition)", message: (error as Error).message });
        continue;
      }
      const id = file.id ?? newId();
      const fileVariables = variables.get(variablesKeyOf(path)) ?? [];
      const result = await this.workflows.gate(workspaceId, definition, id, {
        connections: addedChoices,
        workflowIds: fileIds,
        storedVariables: fileVariables.map((v) => v.name),
      });
      for (const e of result.errors) {
        const where = filePathOf(e.path, file.paths);
        if (!reported.has(where)) problems.push({ file: path, path: where, message: e.message });
      }
      for (const w of result.warnings) warnings.push({ file: path, path: filePathOf(w.path, file.paths), message: w.message });
      const steps = stepsByName(definition);
      for (const step of Object.keys(file.pinnedData)) {
        if (!steps.has(step))
          problems.push({ file: path, path: `pinnedData.${step}`, message: `no step named "${step}"; steps: ${[...steps.keys()].join(", ")}` });
      }
      if (problems.length > problemsBefore) continue;
      prepared.push({
        path,
        file: { ...file, definition },
        id,
        folderName: file.folder,
        variables: fileVariables,
        pins: file.pinnedData,
        result,
        existing,
        action: existing ? "update" : "create",
      });
    }
    if (problems.length > 0) {
      const first = problems
        .slice(0, 3)
        .map((p) => `${p.file} ${p.path}: ${p.message}`)
        .join("; ");
      throw new AppError(
        "VALIDATION_FAILED",
        `nothing was imported: ${problems.length} problem${problems.length === 1 ? "" : "s"} in the files (${first}${problems.length > 3 ? "; …" : ""}); every one is in error.details.problems`,
        { problems },
      );
    }

    // 4. The plan: folders to create, what each file changes, what --prune deletes.
    const newFolders: FolderRow[] = [];
    const at = nowIso();
    for (const p of prepared) {
      if (p.folderName === null || folders.has(p.folderName.toLowerCase())) continue;
      const row: FolderRow = { id: newId(), workspace_id: workspaceId, name: p.folderName, created_at: at, updated_at: at };
      newFolders.push(row);
      folders.set(p.folderName.toLowerCase(), { ...row, workflow_count: 0 });
      plan.unshift({ action: "create", kind: "folder", name: p.folderName, id: row.id });
    }
    const names = new Map([...connectionByName.values()].map((c) => [c.id, c.name]));
    for (const p of prepared) {
      if (p.existing && (await this.sameAs(p, folders.get(p.folderName?.toLowerCase() ?? "")?.id ?? null, names))) p.action = "unchanged";
      plan.push({ action: p.action, kind: "workflow", name: p.file.name, path: p.path, id: p.id });
    }
    const pruned = options.prune ? [...existingRows.values()].filter((r) => !prepared.some((p) => p.id === r.id)) : [];
    for (const row of pruned) plan.push({ action: "delete", kind: "workflow", name: row.name, id: row.id });
    const secretsToSet: SecretToSet[] = [];
    for (const p of prepared) {
      const secret = p.variables.filter((v) => v.secret).map((v) => v.name);
      for (const name of await this.workflows.editor.secretsWithoutValue(p.existing ? p.id : null, secret))
        secretsToSet.push({ id: p.id, workflow: p.file.name, path: p.path, name });
    }
    if (options.dryRun) return { dryRun: true, applied: false, plan, warnings, secretsToSet };

    // 5. Applied in one unit: all of it, or none.
    const deletedLive: WorkflowT[] = [];
    for (const row of pruned) if (row.status === "active") deletedLive.push(await this.workflows.record(row));
    await this.storage.atomically(async (unit) => {
      for (const row of newFolders) await unit.folders.insert(row);
      for (const row of newConnections) await unit.connections.insert(row);
      for (const p of prepared) {
        if (p.action === "unchanged") continue;
        const existing = await unit.workflows.get(workspaceId, p.id);
        const folderId = p.folderName === null ? null : folders.get(p.folderName.toLowerCase())!.id;
        const fields = {
          id: p.id,
          name: p.file.name,
          description: p.file.description,
          tags: p.file.tags,
          folderId,
          testPayloads: p.file.testPayloads,
          definition: p.file.definition,
        };
        const row = this.workflows.importedRow(actor, fields, existing, p.result);
        if (existing) await unit.workflows.update(row);
        else await unit.workflows.insert(row);
        for (const pin of await unit.workflows.pins(row.id)) if (!(pin.step_name in p.pins)) await unit.workflows.deletePin(row.id, pin.step_name);
        await this.workflows.editor.storePins(row, this.workflows.draft(row), p.pins, unit);
        await this.workflows.editor.importVariables(row.id, p.variables, unit);
      }
      for (const row of pruned) await unit.workflows.delete(workspaceId, row.id);
    });
    await this.workflows.afterImport(deletedLive);
    return { dryRun: false, applied: true, plan, warnings, secretsToSet };
  }

  /** Would writing this file change nothing? Its text and variables compared with what an export writes now. */
  private async sameAs(p: Prepared, folderId: string | null, names: Map<string, string>): Promise<boolean> {
    const existing = p.existing!;
    if (existing.folder_id !== folderId) return false;
    const now = await this.stateOf(existing);
    const connectionName = (id: string) => names.get(id);
    const before = workflowYaml({ ...now, connectionName }) + variablesYaml(new Map([["", now.variables]]));
    const after =
      workflowYaml({
        id: p.id,
        name: p.file.name,
        description: p.file.description,
        tags: p.file.tags,
        definition: p.file.definition,
        testPayloads: p.file.testPayloads,
        pinnedData: p.pins,
        connectionName,
      }) + variablesYaml(new Map([["", p.variables]]));
    return before === after;
  }
}

/** The definition path of a node of a file just read (the format keeps node → file path; the gate speaks definition paths). */
function pathOfNode(file: WorkflowFile, node: object): string {
  for (const visited of walk(file.definition)) if (visited.node === node) return visited.path;
  return "trigger";
}
