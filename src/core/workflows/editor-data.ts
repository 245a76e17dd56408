/**
 * What the editor keeps beside a workflow, outside its definition (docs/api.md "Everything else"): test payloads, pinned
 * step outputs (stamped with the step's configuration so that reads report `stale` once the step
 * changed), and workflow variables (`{{variables.x}}`; secret values encrypted at rest, masked on read).
 */
import { AppError, notFound } from "../../http/errors";
import { nowIso } from "../../store/db";
import type { Storage } from "../../store/port";
import type { PinRow, VariableRow, WorkflowRow } from "../../store/workflows";
import type { FlowVersionT } from "../../schema/workflow";
import type { SecretBox } from "../crypto";
import { stepStamp, stepsByName, type AnyNode } from "./tree";

/** The part of the workflows core this module reads: rows by workspace and their drafts (./workflows.ts serves it). */
export interface WorkflowRows {
  readonly storage: Storage;
  row(workspaceId: string, id: string, storage?: Storage): Promise<WorkflowRow>;
  draft(row: WorkflowRow): FlowVersionT;
}

/** Who asks: the editor data is scoped to the caller's workspace. */
type Actor = { workspaceId: string };

export interface PinnedEntry {
  data: unknown;
  pinnedAt: string;
  stale: boolean;
}
export interface VariableView {
  name: string;
  value: unknown;
  secret: boolean;
  description: string;
  updatedAt: string;
}
export interface VariableInput {
  name: string;
  value?: unknown;
  secret?: boolean;
  description?: string;
}

export class EditorData {
  constructor(
    private readonly workflows: WorkflowRows,
    private readonly secrets: SecretBox,
  ) {}

  // ------------------------------------------------------------------ pinned data

  /** Every pin with its staleness judged against `definition` (the current draft). */
  async pinnedView(workflowId: string, definition: FlowVersionT, storage: Storage = this.workflows.storage): Promise<Record<string, PinnedEntry>> {
    return pinnedViewOf(await storage.workflows.pins(workflowId), definition);
  }

  /** Pins a test run may use instead of running the step: only those still matching the step. */
  freshPinsOf(rows: PinRow[], definition: FlowVersionT): Record<string, unknown> {
    const fresh: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(pinnedViewOf(rows, definition))) if (!entry.stale) fresh[name] = entry.data;
    return fresh;
  }

  /**
   * Pins supplied with a definition or a create/update body, written through `unit`. A value shaped like an entry
   * read back from GET (`{data, pinnedAt, stale}`) is left as stored, so a read-modify-write never refreshes a
   * stale pin; any other value is pinned now against the step's current configuration.
   */
  async storePins(row: WorkflowRow, definition: FlowVersionT, pins: Record<string, unknown>, unit: Storage): Promise<void> {
    const names = Object.keys(pins);
    if (names.length === 0) return;
    const byName = stepsByName(definition);
    const at = nowIso();
    const rows: PinRow[] = [];
    for (const name of names) {
      const value = pins[name];
      if (isEntryAsRead(value)) continue;
      const node = byName.get(name);
      if (!node) throw unknownStep(name, byName);
      rows.push({ workflow_id: row.id, step_name: name, data: JSON.stringify(value ?? null), stamp: stepStamp(node), pinned_at: at });
    }
    for (const pin of rows) await unit.workflows.putPin(pin);
  }

  async pin(actor: Actor, workflowId: string, stepName: string, data: unknown): Promise<PinnedEntry & { stepName: string }> {
    const row = await this.workflows.row(actor.workspaceId, workflowId);
    const byName = stepsByName(this.workflows.draft(row));
    const node = byName.get(stepName);
    if (!node) throw unknownStep(stepName, byName);
    const pinnedAt = nowIso();
    await this.workflows.storage.workflows.putPin({
      workflow_id: row.id,
      step_name: stepName,
      data: JSON.stringify(data ?? null),
      stamp: stepStamp(node),
      pinned_at: pinnedAt,
    });
    return { stepName, data: data ?? null, pinnedAt, stale: false };
  }

  async unpin(actor: Actor, workflowId: string, stepName: string): Promise<{ stepName: string; deleted: true }> {
    const row = await this.workflows.row(actor.workspaceId, workflowId);
    const store = this.workflows.storage.workflows;
    if (!(await store.deletePin(row.id, stepName))) {
      const pinned = (await store.pins(row.id)).map((p) => p.step_name);
      throw notFound(`pinned data of step "${stepName}" (pinned steps: ${pinned.join(", ") || "none"})`);
    }
    return { stepName, deleted: true };
  }

  // ------------------------------------------------------------------ test payloads

  async testPayloads(workspaceId: string, workflowId: string): Promise<Record<string, unknown>> {
    return JSON.parse((await this.workflows.row(workspaceId, workflowId)).test_payloads);
  }

  async setTestPayloads(actor: Actor, workflowId: string, payloads: Record<string, unknown>): Promise<Record<string, unknown>> {
    const row = await this.workflows.row(actor.workspaceId, workflowId);
    await this.workflows.storage.workflows.setTestPayloads(row.id, JSON.stringify(payloads));
    return payloads;
  }

  /** Records one named test payload (the test webhook URL's "listen for a test event"). */
  async recordTestPayload(workflowId: string, name: string, payload: unknown): Promise<void> {
    // One unit: test calls landing on two instances at once both keep their payload.
    await this.workflows.storage.atomically(async (unit) => {
      const row = await unit.workflows.getAnyWorkspace(workflowId);
      if (!row) return;
      const payloads = JSON.parse(row.test_payloads) as Record<string, unknown>;
      payloads[name] = payload;
      await unit.workflows.setTestPayloads(row.id, JSON.stringify(payloads));
    });
  }

  // ------------------------------------------------------------------ variables

  async variables(workspaceId: string, workflowId: string): Promise<VariableView[]> {
    const row = await this.workflows.row(workspaceId, workflowId);
    return (await this.workflows.storage.workflows.variables(row.id)).map(variableView);
  }

  /**
   * Replaces the workflow's variables. A secret sent without a value (or with null) keeps its stored
   * value, so a list read with GET (secrets masked as null) can be sent back unchanged.
   */
  async setVariables(actor: Actor, workflowId: string, input: VariableInput[]): Promise<VariableView[]> {
    const seen = new Set<string>();
    for (const v of input) {
      if (seen.has(v.name)) throw new AppError("VALIDATION_FAILED", `variable "${v.name}" appears twice; names are unique`);
      seen.add(v.name);
    }
    // One unit: a secret kept as stored is the one stored when the list is written, whatever another instance set meanwhile.
    return this.workflows.storage.atomically((unit) => this.replaceVariables(unit, actor, workflowId, input));
  }

  private async replaceVariables(unit: Storage, actor: Actor, workflowId: string, input: VariableInput[]): Promise<VariableView[]> {
    const row = await this.workflows.row(actor.workspaceId, workflowId, unit);
    const current = new Map((await unit.workflows.variables(row.id)).map((r) => [r.name, r]));
    const at = nowIso();
    const rows: VariableRow[] = input.map((v) => {
      const secret = v.secret === true;
      const before = current.get(v.name);
      let value: string;
      if (secret && (v.value === undefined || v.value === null)) {
        if (before?.secret) value = before.value;
        else if (before) value = this.secrets.encrypt(before.value);
        else throw new AppError("VALIDATION_FAILED", `secret variable "${v.name}" is new and needs a value`);
      } else if (v.value === undefined) {
        throw new AppError("VALIDATION_FAILED", `variable "${v.name}" needs a value (only a stored secret may leave it out)`);
      } else {
        const text = JSON.stringify(v.value);
        value = secret ? this.secrets.encrypt(text) : text;
      }
      const unchanged = before && before.value === value && before.secret === (secret ? 1 : 0) && before.description === (v.description ?? before.description);
      return {
        workflow_id: row.id,
        name: v.name,
        value,
        secret: secret ? 1 : 0,
        description: v.description ?? before?.description ?? "",
        updated_at: unchanged ? before.updated_at : at,
      };
    });
    await unit.workflows.replaceVariables(row.id, rows);
    return rows.map(variableView);
  }

  async variableNames(workflowId: string): Promise<string[]> {
    return (await this.workflows.storage.workflows.variables(workflowId)).map((v) => v.name);
  }

  /**
   * definition.variables overlaid with the stored variables, secrets decrypted: what `{{variables.x}}` reads;
   * and the secret ones' values as a run's log masks them (a non-empty string as it is, another scalar as its
   * text; empty, null and objects are nothing to mask).
   */
  async runVariablesAndSecrets(workflowId: string, definition: FlowVersionT): Promise<{ variables: Record<string, unknown>; secrets: string[] }> {
    return this.variablesAndSecretsOf(await this.workflows.storage.workflows.variables(workflowId), definition);
  }

  /** As runVariablesAndSecrets, from the stored variables already read. */
  variablesAndSecretsOf(rows: VariableRow[], definition: FlowVersionT): { variables: Record<string, unknown>; secrets: string[] } {
    const variables: Record<string, unknown> = { ...(definition.variables ?? {}) };
    const secrets: string[] = [];
    for (const v of rows) {
      const value: unknown = JSON.parse(v.secret ? this.secrets.decrypt(v.value) : v.value);
      variables[v.name] = value;
      if (!v.secret) continue;
      if (typeof value === "string" && value !== "") secrets.push(value);
      else if (value !== undefined && value !== null && typeof value !== "object") secrets.push(String(value));
    }
    return { variables, secrets };
  }

  /** Stored variables for export: secret values removed. */
  async exportVariables(workflowId: string) {
    return (await this.workflows.storage.workflows.variables(workflowId)).map((v) => ({
      name: v.name,
      value: v.secret ? null : JSON.parse(v.value),
      secret: v.secret === 1,
      description: v.description,
    }));
  }

  /**
   * Which of the secret variables `names` the workflow holds no value for (none stored, an empty one, or a variable of
   * that name that is not secret): an import stores them empty, and its report lists them to be set
   * (docs/workflows-as-code.md). A workflow not stored yet (`workflowId` null) holds none.
   */
  async secretsWithoutValue(workflowId: string | null, names: string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const stored = new Map(workflowId ? (await this.workflows.storage.workflows.variables(workflowId)).map((r) => [r.name, r]) : []);
    return names.filter((name) => {
      const row = stored.get(name);
      if (!row?.secret) return true;
      const value: unknown = JSON.parse(this.secrets.decrypt(row.value));
      return value === "" || value === null || value === undefined;
    });
  }

  /**
   * Imported variables, written through `unit`: secrets arrive without values; a secret the workflow already holds
   * keeps its stored value, a new one is stored empty, to be filled in.
   */
  async importVariables(workflowId: string, input: Array<{ name: string; value?: unknown; secret: boolean; description?: string }>, unit: Storage) {
    const at = nowIso();
    const stored = new Map((await unit.workflows.variables(workflowId)).map((r) => [r.name, r]));
    await unit.workflows.replaceVariables(
      workflowId,
      input.map((v) => {
        const before = stored.get(v.name);
        const value = v.secret ? (before?.secret ? before.value : this.secrets.encrypt(JSON.stringify(v.value ?? ""))) : JSON.stringify(v.value ?? null);
        const description = v.description ?? "";
        const unchanged = before && before.value === value && before.secret === (v.secret ? 1 : 0) && before.description === description;
        return { workflow_id: workflowId, name: v.name, secret: v.secret ? 1 : 0, description, updated_at: unchanged ? before.updated_at : at, value };
      }),
    );
  }
}

/** Every pin with its staleness judged against `definition` (the current draft). */
function pinnedViewOf(rows: PinRow[], definition: FlowVersionT): Record<string, PinnedEntry> {
  if (rows.length === 0) return {};
  const byName = stepsByName(definition);
  const view: Record<string, PinnedEntry> = {};
  for (const pin of rows) {
    const node = byName.get(pin.step_name);
    view[pin.step_name] = { data: JSON.parse(pin.data), pinnedAt: pin.pinned_at, stale: !node || stepStamp(node) !== pin.stamp };
  }
  return view;
}

function variableView(r: VariableRow): VariableView {
  return { name: r.name, value: r.secret ? null : JSON.parse(r.value), secret: r.secret === 1, description: r.description, updatedAt: r.updated_at };
}

function isEntryAsRead(value: unknown): boolean {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.includes("data") && keys.includes("pinnedAt") && keys.every((k) => k === "data" || k === "pinnedAt" || k === "stale");
}

function unknownStep(name: string, byName: Map<string, AnyNode>) {
  return new AppError("NOT_FOUND", `the draft has no step named "${name}"; steps: ${[...byName.keys()].join(", ")}`);
}
