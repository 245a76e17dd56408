/**
 * Workflows: the draft and its record, publish/unpublish, versions and
 * restore (docs/api.md section 5), webhook tokens, and what a run executes. Pinned data, test payloads and variables
 * live in ./editor-data.ts; export/import in ./transfer.ts; folders in ./folders.ts.
 *
 * One file on purpose: this class alone changes a workflow's row, draft, live version and status, each
 * change in one transaction with the gate's verdict; spread over files, those invariants would be too.
 */
import { LRUCache } from "lru-cache";
import type { Principal } from "../identity";
import { AppError, notFound } from "../../http/errors";
import type { Logger } from "../../http/logger";
import { BoundedMap } from "../../lib/bounded-map";
import { type Clock, systemClock } from "../../lib/clock";
import { nowIso } from "../../store/db";
import type { Repositories, Storage } from "../../store/port";
import type { PinRow, VariableRow, VersionRow, WorkflowListRow, WorkflowRow } from "../../store/workflows";
import { emptyDefinition, type FlowVersionT, type SettingsT } from "../../schema/workflow";
import { WORKFLOW_STATUSES, type DiagnosticsT, type WorkflowCreateBodyT, type WorkflowT, type WorkflowUpdateBodyT } from "../../schema/workflow-record";
import type { SecretBox } from "../crypto";
import { isUuid, newId, newSecret, safeEqual, sha256 } from "../../lib/ids";
import { EditorData } from "./editor-data";
import type { LifecycleHooks, PublishedVersion } from "./hooks";
import { assertWithinLimits, cronExpressionOf, definitionHash, normalizeDefinition, shapeOf } from "./tree";
import {
  connectionPieces,
  UNRUNNABLE_CODES,
  markValidity,
  publicDiagnostics,
  validateDefinition,
  type ConnectionChoice,
  type GatePieces,
  type GateResult,
} from "./validate";

export type Actor = Pick<Principal, "workspaceId" | "orgId" | "userId" | "credentialId">;
export type Environment = "production" | "test";
export type LastRun = { status: string; startedAt: string };
/** The workspace's connections of a piece, by name, for the gate (the connections code serves it, through the storage port). */
export type ConnectionDirectory = (workspaceId: string, pieceId: string) => Promise<ConnectionChoice[]>;

/**
 * What an import (./files.ts) adds to the gate's view of the workspace: connections and workflows it creates in
 * the same unit, and the variables the workflow will hold once imported.
 */
export interface GateOverlay {
  connections?: Map<string, ConnectionChoice[]>;
  workflowIds?: Set<string>;
  storedVariables?: string[];
}

/** A workflow as an import writes it (docs/workflows-as-code.md): its fields, and a definition the gate has checked. */
export interface ImportedFields {
  id: string;
  name: string;
  description: string;
  tags: string[];
  folderId: string | null;
  testPayloads: Record<string, unknown>;
  definition: FlowVersionT;
}

export interface WorkflowsOptions {
  storage: Storage;
  log: Logger;
  /** The piece registry; a function because it may be built after this service. */
  pieces: () => GatePieces;
  secrets: SecretBox;
  publicUrl: string;
  hooks: LifecycleHooks[];
  /** WEFT_SCHEDULE_MIN_INTERVAL, so the gate refuses what the scheduler would. */
  scheduleMinIntervalSeconds?: number;
  /** How old a kept list of live workflows is (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
}

export interface RunDefinition {
  workflow: WorkflowT;
  definition: FlowVersionT;
  /** The executed published version (production); for test runs the live version id, or null. */
  versionId: string | null;
  versionNumber: number | null;
  environment: Environment;
  /** definition.variables overlaid with the stored variables (secrets decrypted). */
  variables: Record<string, unknown>;
  /** The values of the secret variables, as the run's log masks them (editor-data.ts runVariablesAndSecrets). */
  secrets: string[];
  /** Step name → pinned output, for test runs (fresh pins only); {} in production. */
  pinnedData: Record<string, unknown>;
}

const HOOK_TIMEOUT_MS = 10_000;

export class Workflows {
  readonly storage: Storage;
  /**
   * Versions read by id. Versions are never changed once written (they go only with their workflow), so each is
   * read once and kept: a webhook's first run read its published version twice (its plan, then what the run
   * executes), and what a production run executes is looked up again every second.
   */
  private readonly versionsById = new BoundedMap<string, VersionRow>(64);
  private connectionDirectory: ConnectionDirectory | undefined;
  /** Parsed definitions: published snapshots never change; drafts are keyed by their hash. */
  private readonly parsed = new LRUCache<string, FlowVersionT>({ max: 2_000 });
  /** Test payloads, pinned data and variables: stored outside the definition. */
  readonly editor: EditorData;
  /** The last liveWorkflows read; dropped when this instance publishes, unpublishes or deletes a live workflow. */
  private lastLive: { at: number; value: Array<{ workflow: WorkflowT; version: PublishedVersion }> } | undefined;

  /** The clock of the engine and the core (WorkflowsOptions.clock). */
  readonly clock: Clock;

  constructor(private readonly options: WorkflowsOptions) {
    this.storage = options.storage;
    this.clock = options.clock ?? systemClock;
    this.editor = new EditorData(this, options.secrets);
  }

  /** The connections code plugs in its directory so the gate can name the legal connection ids (read before it runs: `gate`). */
  setConnectionDirectory(directory: ConnectionDirectory) {
    this.connectionDirectory = directory;
  }

  get pieces(): GatePieces {
    return this.options.pieces();
  }

  // ------------------------------------------------------------------ records

  /** The row of a workflow of this workspace, or 404 (another workspace's ids are simply not found). */
  async row(workspaceId: string, id: string, storage: Repositories = this.storage): Promise<WorkflowRow> {
    const row = await storage.workflows.get(workspaceId, id);
    if (!row) throw notFound(`workflow ${id}`);
    return row;
  }

  /** A published version by id (kept once read: see `versionsById`). */
  async versionById(versionId: string, via: Repositories = this.storage): Promise<VersionRow | null> {
    let row = this.versionsById.recall(versionId);
    if (!row) {
      row = (await via.workflows.versionById(versionId)) ?? undefined;
      if (row) this.versionsById.set(versionId, row);
    }
    return row ?? null;
  }

  draft(row: WorkflowRow): FlowVersionT {
    const key = `d:${row.id}:${row.draft_hash}:${row.definition_rev}`;
    let definition = this.parsed.get(key);
    if (!definition) {
      definition = JSON.parse(row.definition) as FlowVersionT;
      this.parsed.set(key, definition);
    }
    return definition;
  }

  snapshot(version: Pick<VersionRow, "id" | "definition">): FlowVersionT {
    const key = `v:${version.id}`;
    let definition = this.parsed.get(key);
    if (!definition) {
      definition = JSON.parse(version.definition) as FlowVersionT;
      this.parsed.set(key, definition);
    }
    return definition;
  }

  /**
   * The full record (docs/api.md "1. Create a workflow" shows one): definition, test payloads, pinned data and
   * lastRun included.
   */
  async record(row: WorkflowRow, storage: Storage = this.storage): Promise<WorkflowT> {
    const definition = this.draft(row);
    const live = await storage.workflows.liveVersionHash(row.latest_version_id);
    const pinnedData = await this.editor.pinnedView(row.id, definition, storage);
    const lastRun = (await this.lastRuns([row.id], storage)).get(row.id) ?? null;
    const { id, name, description, ...rest } = this.summary({ ...row, live_hash: live?.hash ?? null, live_number: live?.number ?? null }, lastRun);
    const { lastRun: last, ...fields } = rest;
    // Fields in the order docs/api.md "1. Create a workflow" shows a record, so a person reading the JSON finds them.
    return {
      id,
      name,
      description,
      definition: structuredClone(definition),
      ...fields,
      testPayloads: JSON.parse(row.test_payloads),
      pinnedData,
      lastRun: last,
    };
  }

  /** The record without definition, test payloads and pinned data (what lists show). */
  summary(row: WorkflowListRow, lastRun: LastRun | null): WorkflowT {
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      status: row.status as WorkflowT["status"],
      triggerType: row.trigger_type,
      cronExpression: row.cron_expression,
      webhookToken: row.webhook_token,
      webhookUrl: row.webhook_token ? `${this.options.publicUrl}/webhook/${row.webhook_token}` : null,
      latestVersionId: row.latest_version_id,
      latestVersionNumber: row.live_number,
      definitionRev: row.definition_rev,
      hasUnpublishedChanges: row.draft_hash !== row.live_hash,
      folderId: row.folder_id,
      tags: JSON.parse(row.tags),
      workspaceId: row.workspace_id,
      orgId: row.org_id,
      createdBy: row.created_by,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      lastRun,
    };
  }

  /** Each workflow's most recent run, read through `storage` (a unit's own, inside one); none when the read fails. */
  private async lastRuns(ids: string[], storage: Storage = this.storage): Promise<Map<string, LastRun>> {
    try {
      return await storage.runReads.lastRuns(ids);
    } catch (error) {
      this.options.log.warn("lastRun lookup failed", { error: String(error) });
      return new Map();
    }
  }

  async get(workspaceId: string, id: string): Promise<WorkflowT> {
    return this.record(await this.row(workspaceId, id));
  }

  async list(workspaceId: string, query: { page: number; limit: number; offset: number; folderId?: string; status?: string; tag?: string; q?: string }) {
    const folderId = query.folderId === "none" ? null : isUuid(query.folderId) ? query.folderId : undefined;
    const status = (WORKFLOW_STATUSES as readonly string[]).includes(query.status ?? "") ? query.status : undefined;
    const { rows, total } = await this.storage.workflows.list(
      workspaceId,
      { folderId, status, tag: query.tag || undefined, q: query.q?.trim() || undefined },
      query.limit,
      query.offset,
    );
    const lastRuns = await this.lastRuns(rows.map((r) => r.id));
    return { data: rows.map((r) => this.summary(r, lastRuns.get(r.id) ?? null)), total };
  }

  // ------------------------------------------------------------------ the gate

  /** The gate with this workspace's context (connections, workflows, stored variables), read before it runs. */
  async gate(workspaceId: string, definition: unknown, workflowId?: string, overlay: GateOverlay = {}): Promise<GateResult> {
    const directory = this.connectionDirectory;
    // The one workflow the gate may ask about (settings.errorWorkflowId), looked up before it runs.
    const errorWorkflowId = (definition as { settings?: { errorWorkflowId?: unknown } } | null)?.settings?.errorWorkflowId;
    const errorWorkflowExists =
      typeof errorWorkflowId === "string" &&
      (overlay.workflowIds?.has(errorWorkflowId) === true || (await this.storage.workflows.exists(workspaceId, errorWorkflowId)));
    const storedVariables = overlay.storedVariables ?? (workflowId ? await this.editor.variableNames(workflowId) : []);
    // The connections of each piece the gate may ask about, read together before it runs. Should it ask about
    // one not read (a piece installed meanwhile), that one is read and the gate runs again: it answers as if it
    // had read every connection it needed.
    const choices = new Map<string, ConnectionChoice[]>();
    let unread = directory ? connectionPieces(definition, this.pieces) : [];
    for (;;) {
      const read = await Promise.all(unread.map(async (pieceId) => [pieceId, await directory!(workspaceId, pieceId)] as const));
      for (const [pieceId, connections] of read) choices.set(pieceId, [...connections, ...(overlay.connections?.get(pieceId) ?? [])]);
      const asked = new Set<string>();
      const result = validateDefinition(definition, {
        pieces: this.pieces,
        connections: directory
          ? (pieceId) => {
              const connections = choices.get(pieceId);
              if (!connections) asked.add(pieceId);
              return connections;
            }
          : undefined,
        workflowExists: (id) => id === errorWorkflowId && errorWorkflowExists,
        workflowId,
        storedVariables,
        scheduleMinIntervalSeconds: this.options.scheduleMinIntervalSeconds,
      });
      if (asked.size === 0) return result;
      unread = [...asked];
    }
  }

  /** POST /api/workflows/validate: the gate's diagnostics; writes nothing. */
  async validate(workspaceId: string, definition: unknown, workflowId?: string): Promise<DiagnosticsT> {
    if (workflowId !== undefined && !(isUuid(workflowId) && (await this.storage.workflows.exists(workspaceId, workflowId)))) workflowId = undefined;
    return publicDiagnostics(await this.gate(workspaceId, definition, workflowId));
  }

  /**
   * The editor-save gate (docs/api.md "5. Edit, conflict, restore"): structure (already checked by the schema),
   * limits, and — for an ACTIVE workflow — every piece runnable by the pieces served (in a cluster, by every
   * instance that executes runs); 422 PIECE_UNAVAILABLE otherwise.
   * Returns the full gate result so the caller can set each node's `valid` flag.
   */
  private async saveGate(workspaceId: string, definition: FlowVersionT, workflowId: string | undefined, active: boolean): Promise<GateResult> {
    assertWithinLimits(shapeOf(definition));
    const result = await this.gate(workspaceId, definition, workflowId);
    if (active) {
      const blocking = result.errors.filter((e) => UNRUNNABLE_CODES.has(e.code));
      if (blocking.length > 0) {
        throw new AppError("PIECE_UNAVAILABLE", `the workflow is live and the pieces served cannot run it: ${blocking.map((e) => e.message).join("; ")}`, {
          errors: blocking,
        });
      }
    }
    markValidity(definition, result);
    return result;
  }

  // ------------------------------------------------------------------ create, update, delete

  async create(actor: Actor, body: WorkflowCreateBodyT): Promise<WorkflowT> {
    const { row, definition, pins } = await this.prepareCreate(actor, body);
    await this.storage.atomically(async (unit) => {
      await unit.workflows.insert(row);
      await this.editor.storePins(row, definition, pins, unit);
    });
    return this.record(row);
  }

  /**
   * A new workflow's row, its definition and the pins it comes with, checked by the gate; written by `create`
   * (or by an import, with its variables, in one unit).
   */
  async prepareCreate(actor: Actor, body: WorkflowCreateBodyT): Promise<{ row: WorkflowRow; definition: FlowVersionT; pins: Record<string, unknown> }> {
    const pieces = this.pieces;
    let definition: FlowVersionT;
    let pins: Record<string, unknown> = {};
    if (body.definition) {
      ({ definition, pinnedData: pins } = normalizeDefinition(body.definition, pieces));
      assertTriggerType(body.triggerType, definition);
    } else {
      definition = emptyDefinition();
      if (body.triggerType && body.triggerType !== "manual") {
        definition.trigger = { name: "trigger", displayName: `${body.triggerType} trigger`, type: body.triggerType, config: {} };
      }
    }
    if (body.folderId) await this.assertFolder(actor.workspaceId, body.folderId);
    await this.saveGate(actor.workspaceId, definition, undefined, false);
    const at = nowIso();
    const text = JSON.stringify(definition);
    const row: WorkflowRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      org_id: actor.orgId,
      name: body.name,
      description: body.description ?? "",
      definition: text,
      draft_hash: definitionHash(definition),
      definition_rev: 1,
      status: "draft",
      trigger_type: definition.trigger.type,
      cron_expression: cronExpressionOf(definition),
      webhook_token: null,
      webhook_token_hash: null,
      latest_version_id: null,
      folder_id: body.folderId ?? null,
      tags: JSON.stringify(body.tags ?? []),
      test_payloads: JSON.stringify(body.testPayloads ?? {}),
      created_by: actor.userId ?? actor.credentialId,
      created_at: at,
      updated_at: at,
    };
    ensureWebhookToken(row);
    return { row, definition, pins: { ...pins, ...(body.pinnedData ?? {}) } };
  }

  async update(actor: Actor, id: string, body: WorkflowUpdateBodyT): Promise<WorkflowT> {
    // A new definition passes the gate before the unit, against the row as read now; the unit writes it only if
    // the workflow is still as live (or not) as the gate was told, else the gate runs again.
    for (let attempt = 1; ; attempt++) {
      let checked: { definition: FlowVersionT; pins: Record<string, unknown>; valid: boolean; active: boolean } | undefined;
      if (body.definition !== undefined) {
        const before = await this.row(actor.workspaceId, id);
        assertRevision(before, body.expectedRev);
        const { definition, pinnedData: pins } = normalizeDefinition(body.definition, this.pieces);
        assertTriggerType(body.triggerType, definition);
        const active = before.status === "active";
        const result = await this.saveGate(actor.workspaceId, definition, before.id, active);
        checked = { definition, pins, valid: result.valid, active };
      }
      let autoPublish = false;
      const row = await this.storage.atomically(async (unit) => {
        const row = await this.row(actor.workspaceId, id, unit);
        assertRevision(row, body.expectedRev);
        if (checked && checked.active !== (row.status === "active") && attempt < 3) return null;
        const next: WorkflowRow = { ...row, updated_at: nowIso(), definition_rev: row.definition_rev + 1 };
        if (body.name !== undefined) next.name = body.name;
        if (body.description !== undefined) next.description = body.description;
        if (body.tags !== undefined) next.tags = JSON.stringify(body.tags);
        if (body.testPayloads !== undefined) next.test_payloads = JSON.stringify(body.testPayloads);
        if (body.folderId !== undefined) {
          if (body.folderId !== null) await this.assertFolder(actor.workspaceId, body.folderId, unit);
          next.folder_id = body.folderId;
        }
        let definition = this.draft(row);
        let pins: Record<string, unknown> = {};
        if (checked) {
          ({ definition, pins } = checked);
          this.setDraft(next, definition);
          autoPublish = row.status === "active" && definition.settings?.autoPublishFixes === true && checked.valid && next.draft_hash !== row.draft_hash;
        } else if (body.triggerType !== undefined) {
          assertTriggerType(body.triggerType, definition);
        }
        await unit.workflows.update(next);
        await this.editor.storePins(next, definition, { ...pins, ...(body.pinnedData ?? {}) }, unit);
        return next;
      });
      if (!row) continue;
      // autoPublishFixes: a fix saved to a live workflow goes live at once when it passes the gate.
      if (autoPublish) return this.publish(actor, row.id);
      return this.record(row);
    }
  }

  /**
   * The row an import writes for `fields` (docs/workflows-as-code.md): a new draft, or `existing` with a new
   * draft and fields — its status and published version untouched, as an editor save leaves them.
   */
  importedRow(actor: Actor, fields: ImportedFields, existing: WorkflowRow | null, result: GateResult): WorkflowRow {
    const definition = structuredClone(fields.definition);
    markValidity(definition, result);
    const at = nowIso();
    const row: WorkflowRow = existing
      ? { ...existing, definition_rev: existing.definition_rev + 1, updated_at: at }
      : {
          id: fields.id,
          workspace_id: actor.workspaceId,
          org_id: actor.orgId,
          name: fields.name,
          description: "",
          definition: "",
          draft_hash: "",
          definition_rev: 1,
          status: "draft",
          trigger_type: "",
          cron_expression: null,
          webhook_token: null,
          webhook_token_hash: null,
          latest_version_id: null,
          folder_id: null,
          tags: "[]",
          test_payloads: "{}",
          created_by: actor.userId ?? actor.credentialId,
          created_at: at,
          updated_at: at,
        };
    row.name = fields.name;
    row.description = fields.description;
    row.tags = JSON.stringify(fields.tags);
    row.folder_id = fields.folderId;
    row.test_payloads = JSON.stringify(fields.testPayloads);
    this.setDraft(row, definition);
    return row;
  }

  /** After an import's unit committed: workflows it deleted that were live are unpublished (their hooks run). */
  async afterImport(deletedLive: WorkflowT[]): Promise<void> {
    this.lastLive = undefined;
    for (const record of deletedLive) await this.runUnpublishHooks(record);
  }

  async delete(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    const row = await this.row(actor.workspaceId, id);
    const record = row.status === "active" ? await this.record(row) : undefined;
    await this.storage.workflows.delete(actor.workspaceId, id);
    if (record) {
      this.lastLive = undefined;
      await this.runUnpublishHooks(record);
    }
    return { id, deleted: true };
  }

  private setDraft(row: WorkflowRow, definition: FlowVersionT) {
    row.definition = JSON.stringify(definition);
    row.draft_hash = definitionHash(definition);
    row.trigger_type = definition.trigger.type;
    row.cron_expression = cronExpressionOf(definition);
    ensureWebhookToken(row);
  }

  async assertFolder(workspaceId: string, folderId: string, storage: Storage = this.storage) {
    if (!(await storage.folders.get(workspaceId, folderId))) {
      const folders = await storage.folders.list(workspaceId);
      throw new AppError(
        "VALIDATION_FAILED",
        `folderId ${folderId} names no folder of this workspace; folders: ${folders.map((f) => `${f.id} (${f.name})`).join(", ") || "none (create one with POST /api/folders)"}`,
      );
    }
  }

  // ------------------------------------------------------------------ lifecycle (docs/api.md sections 3 and 6)

  /** Publish: gate → immutable version (unless the draft equals the live one) → live. */
  async publish(actor: Actor, id: string): Promise<WorkflowT> {
    const row = await this.row(actor.workspaceId, id);
    const definition = this.draft(row);
    const result = await this.gate(actor.workspaceId, definition, row.id);
    if (!result.valid) {
      const first = result.errors
        .slice(0, 3)
        .map((e) => `${e.path}: ${e.message}`)
        .join("; ");
      throw new AppError(
        "NOT_PUBLISHABLE",
        `the draft does not pass the publish gate (${result.errors.length} error${result.errors.length === 1 ? "" : "s"}): ${first}. The diagnostics are in error.details; POST /api/workflows/validate shows the same`,
        publicDiagnostics(result),
      );
    }
    const { next, version } = await this.storage.atomically(async (unit) => {
      const current = await this.row(actor.workspaceId, id, unit);
      let version = current.latest_version_id ? await unit.workflows.version(actor.workspaceId, id, current.latest_version_id) : null;
      if (!version || version.hash !== current.draft_hash) {
        version = {
          id: newId(),
          workflow_id: id,
          workspace_id: actor.workspaceId,
          number: await unit.workflows.nextVersionNumber(id),
          definition: current.definition,
          hash: current.draft_hash,
          trigger_type: current.trigger_type,
          created_by: actor.userId ?? actor.credentialId,
          created_at: nowIso(),
        };
        await unit.workflows.insertVersion(version);
      }
      const next: WorkflowRow = { ...current, status: "active", latest_version_id: version.id, updated_at: nowIso() };
      ensureWebhookToken(next);
      await unit.workflows.update(next);
      return { next, version };
    });
    this.lastLive = undefined;
    const record = await this.record(next);
    const published: PublishedVersion = { id: version.id, number: version.number, definition: structuredClone(this.snapshot(version)) };
    for (const hook of this.options.hooks) await hook.onPublish?.(record, published);
    return record;
  }

  /** Unpublish: live → paused (hooks best-effort); paused stays paused; a draft stays a draft. */
  async unpublish(actor: Actor, id: string): Promise<WorkflowT> {
    // One unit: the whole row written back is the one read, whatever another instance saves meanwhile.
    const { row, next } = await this.storage.atomically(async (unit) => {
      const row = await this.row(actor.workspaceId, id, unit);
      if (row.status !== "active") return { row, next: null };
      const next: WorkflowRow = { ...row, status: "paused", updated_at: nowIso() };
      await unit.workflows.update(next);
      return { row, next };
    });
    if (!next) return this.record(row);
    this.lastLive = undefined;
    const record = await this.record(next);
    await this.runUnpublishHooks(record);
    return record;
  }

  private async runUnpublishHooks(record: WorkflowT) {
    for (const hook of this.options.hooks) {
      if (!hook.onUnpublish) continue;
      try {
        await withTimeout(Promise.resolve(hook.onUnpublish(record)), HOOK_TIMEOUT_MS);
      } catch (error) {
        this.options.log.warn("unpublish hook failed (ignored: de-registration is best-effort)", {
          workflowId: record.id,
          error: (error as Error)?.message ?? String(error),
        });
      }
    }
  }

  /** The only operation that revokes a webhook token: a new one replaces it at once. */
  async rotateWebhook(actor: Actor, id: string): Promise<WorkflowT> {
    const { previous, next } = await this.storage.atomically(async (unit) => {
      const row = await this.row(actor.workspaceId, id, unit);
      if (row.trigger_type !== "webhook") {
        throw new AppError("UNPROCESSABLE", `workflow ${id} has a ${row.trigger_type} trigger; only webhook triggers have a URL token to rotate`);
      }
      const next: WorkflowRow = { ...row, webhook_token: null, webhook_token_hash: null, updated_at: nowIso() };
      ensureWebhookToken(next);
      await unit.workflows.update(next);
      return { previous: row.webhook_token, next };
    });
    const record = await this.record(next);
    for (const hook of this.options.hooks) await hook.onWebhookRotated?.(record, previous);
    return record;
  }

  // ------------------------------------------------------------------ versions (docs/api.md section 5)

  async versions(workspaceId: string, id: string) {
    const row = await this.row(workspaceId, id);
    const rows = await this.storage.workflows.versions(workspaceId, id);
    return { data: rows.map((v) => versionSummary(v, row.latest_version_id)), total: rows.length };
  }

  async version(workspaceId: string, id: string, versionId: string) {
    const row = await this.row(workspaceId, id);
    const version = await this.versionRow(workspaceId, id, versionId);
    return { ...versionSummary(version, row.latest_version_id), definition: structuredClone(this.snapshot(version)) };
  }

  private async versionRow(workspaceId: string, id: string, versionId: string): Promise<VersionRow> {
    const version = await this.storage.workflows.version(workspaceId, id, versionId);
    if (!version) throw notFound(`version ${versionId} of workflow ${id} (GET /api/workflows/${id}/versions lists its versions)`);
    return version;
  }

  /** Copies a version's snapshot over the draft; production is untouched until the next publish. */
  async restore(actor: Actor, id: string, versionId: string, expectedRev?: number): Promise<WorkflowT> {
    // The snapshot passes the gate before the unit, as in `update`.
    for (let attempt = 1; ; attempt++) {
      const before = await this.row(actor.workspaceId, id);
      const version = await this.versionRow(actor.workspaceId, id, versionId);
      assertRevision(before, expectedRev);
      const { definition } = normalizeDefinition(this.snapshot(version), this.pieces);
      const active = before.status === "active";
      await this.saveGate(actor.workspaceId, definition, before.id, active);
      const next = await this.storage.atomically(async (unit) => {
        const row = await this.row(actor.workspaceId, id, unit);
        assertRevision(row, expectedRev);
        if (active !== (row.status === "active") && attempt < 3) return null;
        const next: WorkflowRow = { ...row, definition_rev: row.definition_rev + 1, updated_at: nowIso() };
        // Also mints a webhook token when the restored trigger is a webhook and the workflow has none.
        this.setDraft(next, definition);
        await unit.workflows.update(next);
        return next;
      });
      if (!next) continue;
      // Pinned data keeps its stamps; staleness is judged against the restored draft on every read.
      return this.record(next);
    }
  }

  // ------------------------------------------------------------------ for the engine and triggers

  /** What a run executes (docs/api.md "4. Run"): production = the published snapshot, test = the draft. */
  async definitionForRun(workspaceId: string, workflowId: string, environment: Environment, via: Repositories = this.storage): Promise<RunDefinition> {
    return this.runDefinitionOf(await this.row(workspaceId, workflowId, via), environment, via);
  }

  /** As definitionForRun, for system callers that hold only a workflow id (schedulers, error workflows). */
  async definitionForRunAnyWorkspace(workflowId: string, environment: Environment, via: Repositories = this.storage): Promise<RunDefinition> {
    const row = await via.workflows.getAnyWorkspace(workflowId);
    if (!row) throw notFound(`workflow ${workflowId}`);
    return this.runDefinitionOf(row, environment, via);
  }

  /** `via`: the repositories to read through (a unit's, when a unit asks: it awaits only its own calls). */
  private async runDefinitionOf(row: WorkflowRow, environment: Environment, via: Repositories): Promise<RunDefinition> {
    const live = row.latest_version_id ? await this.versionById(row.latest_version_id, via) : null;
    const variables = await via.workflows.variables(row.id);
    const pins = environment === "test" ? await via.workflows.pins(row.id) : [];
    return this.runDefinitionFrom(row, live, variables, pins, environment);
  }

  private runDefinitionFrom(row: WorkflowRow, live: VersionRow | null, variables: VariableRow[], pins: PinRow[], environment: Environment): RunDefinition {
    const workflow = this.summary({ ...row, live_hash: live?.hash ?? null, live_number: live?.number ?? null }, null);
    if (environment === "production") {
      if (!live) {
        throw new AppError(
          "NOT_PUBLISHED",
          `workflow ${row.id} has never been published, so there is nothing to run in production; publish it (POST /api/workflows/${row.id}/publish) or run the draft with environment=test`,
        );
      }
      const definition = this.snapshot(live);
      return {
        workflow,
        definition,
        versionId: live.id,
        versionNumber: live.number,
        environment,
        ...this.editor.variablesAndSecretsOf(variables, definition),
        pinnedData: {},
      };
    }
    const definition = this.draft(row);
    return {
      workflow,
      definition,
      versionId: live?.id ?? null,
      versionNumber: live?.number ?? null,
      environment,
      ...this.editor.variablesAndSecretsOf(variables, definition),
      pinnedData: this.editor.freshPinsOf(pins, definition),
    };
  }

  /** The settings of a workflow's live version (concurrencyLimit, maintenanceMode, …); null when it is not live. */
  async liveSettings(workflowId: string): Promise<SettingsT | null> {
    const row = await this.storage.workflows.getAnyWorkspace(workflowId);
    const live = row?.status === "active" && row.latest_version_id ? await this.versionById(row.latest_version_id) : null;
    return live ? (this.snapshot(live).settings ?? {}) : null;
  }

  /** The workflow a public webhook URL names (token compared by hash, then in constant time), or null. */
  async findByWebhookToken(token: string): Promise<WorkflowT | null> {
    if (!token || token.length > 200) return null;
    const row = await this.storage.workflows.byWebhookTokenHash(sha256(token));
    if (!row?.webhook_token || !safeEqual(row.webhook_token, token)) return null;
    return this.record(row);
  }

  /**
   * Every live workflow with its published snapshot (schedulers load these at start). `reuseMs`: a list read
   * at most that long ago may be returned (read-only, shared), unless this instance published or unpublished
   * since — the run follow-ups' first look after a start takes the list the triggers' repair just read.
   * `storage`: a unit that reads it (the triggers' repair).
   */
  async liveWorkflows(reuseMs = 0, storage: Storage = this.storage): Promise<Array<{ workflow: WorkflowT; version: PublishedVersion }>> {
    const now = this.clock.now();
    if (this.lastLive && now - this.lastLive.at <= reuseMs) return this.lastLive.value;
    const versions = await storage.workflows.liveVersions();
    return this.keepLive(now, versions, await storage.workflows.live());
  }

  private keepLive(at: number, versions: Map<string, VersionRow>, rows: WorkflowRow[]) {
    const value = rows.flatMap((row) => {
      const version = row.latest_version_id ? versions.get(row.latest_version_id) : undefined;
      if (!version) return [];
      const workflow = this.summary({ ...row, live_hash: version.hash, live_number: version.number }, null);
      return [{ workflow, version: { id: version.id, number: version.number, definition: this.snapshot(version) } }];
    });
    this.lastLive = { at, value };
    return value;
  }
}

function versionSummary(v: Omit<VersionRow, "definition">, liveId: string | null) {
  return {
    id: v.id,
    workflowId: v.workflow_id,
    number: v.number,
    triggerType: v.trigger_type,
    live: v.id === liveId,
    createdAt: v.created_at,
    createdBy: v.created_by,
  };
}

function assertRevision(row: WorkflowRow, expectedRev: number | undefined) {
  if (expectedRev !== undefined && expectedRev > 0 && expectedRev !== row.definition_rev) {
    throw new AppError(
      "REVISION_CONFLICT",
      `the draft is at definitionRev ${row.definition_rev}, not ${expectedRev}: someone saved in between. Nothing was written; read the workflow again (GET /api/workflows/${row.id}), re-apply your change and send expectedRev ${row.definition_rev}`,
      { currentRev: row.definition_rev, expectedRev },
    );
  }
}

function assertTriggerType(triggerType: string | undefined, definition: FlowVersionT) {
  if (triggerType !== undefined && triggerType !== definition.trigger.type) {
    throw new AppError(
      "VALIDATION_FAILED",
      `triggerType "${triggerType}" contradicts definition.trigger.type "${definition.trigger.type}"; leave triggerType out (it follows the definition) or send "${definition.trigger.type}"`,
    );
  }
}

/** Webhook workflows always hold a token; it survives unpublish and trigger changes until rotated. */
function ensureWebhookToken(row: WorkflowRow) {
  if (row.trigger_type === "webhook" && !row.webhook_token) {
    row.webhook_token = newSecret("wh_", 24);
    row.webhook_token_hash = sha256(row.webhook_token);
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`hook did not finish within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
