/**
 * The Workflow record (docs/api.md "1. Create a workflow" shows one), its versions, the gate's diagnostics
 * and the request bodies of the workflow API. The definition itself is FlowVersion (./workflow.ts).
 */
import { Type } from "@sinclair/typebox";
import { t, type Static } from "elysia";
import { DateTime, PageQuery, Uuid } from "./common";
import { FlowVersion } from "./workflow";

const strict = { additionalProperties: false } as const;
const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()]);

export const WORKFLOW_STATUSES = ["draft", "active", "paused"] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export const LastRun = t.Object({ status: t.String(), startedAt: DateTime }, { description: "the most recent run of any environment" });

export const PinnedEntry = t.Object({
  data: t.Any({ description: "the pinned output of the step" }),
  pinnedAt: DateTime,
  stale: t.Boolean({ description: "true when the step's configuration changed since the data was pinned, or the step is gone" }),
});

export const Tag = t.String({ minLength: 1, maxLength: 50 });
export const Tags = t.Array(Tag, { maxItems: 50, uniqueItems: true });

export const Workflow = t.Object(
  {
    id: Uuid,
    name: t.String(),
    description: t.String(),
    definition: t.Optional(FlowVersion),
    status: t.Union([t.Literal("draft"), t.Literal("active"), t.Literal("paused")], { description: "draft (initial), active (live) or paused" }),
    triggerType: t.String({ description: "follows definition.trigger.type" }),
    cronExpression: Nullable(t.String({ description: "the cron trigger's expression; null for other triggers" })),
    webhookToken: Nullable(t.String({ description: "server-owned; present for webhook triggers; revoked only by webhook/rotate" })),
    webhookUrl: Nullable(t.String({ description: "{PUBLIC_URL}/webhook/{webhookToken}" })),
    latestVersionId: Nullable(Uuid),
    latestVersionNumber: Nullable(Type.Integer()),
    definitionRev: Type.Integer({ description: "revision counter of the draft; send it back as expectedRev" }),
    hasUnpublishedChanges: t.Boolean(),
    folderId: Nullable(Uuid),
    tags: t.Array(t.String()),
    testPayloads: t.Optional(t.Record(t.String(), t.Any())),
    pinnedData: t.Optional(t.Record(t.String(), PinnedEntry)),
    workspaceId: Uuid,
    orgId: Uuid,
    createdBy: Nullable(t.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
    lastRun: Nullable(LastRun),
  },
  { $id: "Workflow" },
);
export type WorkflowT = Static<typeof Workflow>;

const ignored = (what: string) => t.Optional(t.Any({ description: `server-owned (${what}); ignored when sent` }));

/** Fields a client may read back and send again unchanged: the server ignores them. */
const serverOwned = {
  id: ignored("id"),
  status: ignored("status; always draft on create"),
  webhookToken: ignored("never accepted from clients"),
  webhookUrl: ignored("derived"),
  latestVersionId: ignored("set by publish"),
  latestVersionNumber: ignored("set by publish"),
  definitionRev: ignored("revision counter"),
  hasUnpublishedChanges: ignored("derived"),
  cronExpression: ignored("derived from the trigger's config.expression"),
  workspaceId: ignored("the token's workspace"),
  orgId: ignored("the token's org"),
  createdBy: ignored("the caller"),
  createdAt: ignored("timestamp"),
  updatedAt: ignored("timestamp"),
  lastRun: ignored("derived from runs"),
};

const editable = {
  description: t.Optional(t.String({ maxLength: 5000 })),
  definition: t.Optional(FlowVersion),
  triggerType: t.Optional(
    t.Union(
      [
        t.Literal("manual"),
        t.Literal("webhook"),
        t.Literal("cron"),
        t.Literal("poll"),
        t.Literal("error"),
        t.Literal("run_finished"),
        t.Literal("callable"),
        t.Literal("subscription"),
      ],
      { description: "should be left out: it follows definition.trigger.type. Without a definition it picks the kind of the empty trigger" },
    ),
  ),
  folderId: t.Optional(Nullable(Uuid)),
  tags: t.Optional(Tags),
  testPayloads: t.Optional(t.Record(t.String(), t.Any(), { description: "stored outside the definition" })),
  pinnedData: t.Optional(
    t.Record(t.String(), t.Any(), { description: "step name → output to pin (or a pinned entry as read); stored outside the definition" }),
  ),
};

export const WorkflowCreateBody = t.Object(
  { name: t.String({ minLength: 1, maxLength: 200 }), ...editable, ...serverOwned },
  { ...strict, description: "server-owned fields are accepted and ignored, so a record read with GET can be posted back" },
);
export type WorkflowCreateBodyT = Static<typeof WorkflowCreateBody>;

export const WorkflowUpdateBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    ...editable,
    expectedRev: t.Optional(
      Type.Integer({
        description: "the definitionRev you read; a stale value answers 409 REVISION_CONFLICT and nothing is written. 0 or omitted: unconditional",
      }),
    ),
    ...serverOwned,
  },
  { ...strict, description: "fields left out keep their values" },
);
export type WorkflowUpdateBodyT = Static<typeof WorkflowUpdateBody>;

export const WorkflowListQuery = t.Object(
  {
    ...PageQuery,
    folderId: t.Optional(t.String({ description: "a folder id, or `none` for workflows outside any folder; other values are ignored" })),
    status: t.Optional(t.String({ description: "draft, active or paused; other values are ignored" })),
    tag: t.Optional(t.String({ description: "exact tag match" })),
    q: t.Optional(t.String({ description: "case-insensitive substring of name or description" })),
  },
  { additionalProperties: true },
);

export const RestoreBody = t.Object({ expectedRev: t.Optional(Type.Integer({ description: "0, negative or omitted: unconditional restore" })) }, strict);

export const Diagnostic = t.Object({
  path: t.String({ description: "where the fault is, e.g. trigger.nextAction.config.url" }),
  code: t.String(),
  message: t.String(),
  allowed: t.Optional(t.Array(t.Any(), { description: "the admissible values" })),
  step: t.Optional(t.String({ description: "the name of the step the diagnostic concerns" })),
});
export type DiagnosticT = Static<typeof Diagnostic>;

export const Diagnostics = t.Object({ valid: t.Boolean(), errors: t.Array(Diagnostic), warnings: t.Array(Diagnostic) }, { $id: "Diagnostics" });
export type DiagnosticsT = Static<typeof Diagnostics>;

export const ValidateQuery = t.Object(
  { workflowId: t.Optional(t.String({ description: "validate in the context of this workflow (its variables; errorWorkflowId may not name it)" })) },
  { additionalProperties: true },
);

export const VersionSummary = t.Object({
  id: Uuid,
  workflowId: Uuid,
  number: Type.Integer(),
  triggerType: t.String(),
  live: t.Boolean({ description: "true for the version latestVersionId names" }),
  createdAt: DateTime,
  createdBy: Nullable(t.String()),
});
export const Version = t.Composite([VersionSummary, t.Object({ definition: FlowVersion })], { $id: "WorkflowVersion" });

export const Variable = t.Object({
  name: t.String(),
  value: t.Any({ description: "null when secret (masked)" }),
  secret: t.Boolean(),
  description: t.String(),
  updatedAt: DateTime,
});
export const VariablesBody = t.Object(
  {
    variables: t.Array(
      t.Object(
        {
          name: t.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$", description: "usable as {{variables.<name>}}" }),
          value: t.Optional(t.Any({ description: "omit (or send null) for a secret to keep its stored value" })),
          secret: t.Optional(t.Boolean({ description: "encrypted at rest and masked on read" })),
          description: t.Optional(t.String({ maxLength: 500 })),
        },
        strict,
      ),
      { maxItems: 200 },
    ),
  },
  { ...strict, description: "replaces the workflow's variables" },
);

export const TestPayloadsBody = t.Record(t.String({ maxLength: 100 }), t.Any(), { description: "name → trigger input; replaces the stored payloads" });
export const PinBody = t.Object({ data: t.Any({ description: "the output the step should be shown (and test runs use) instead of running" }) }, strict);
export const StepNameParams = t.Object({ id: Uuid, stepName: t.String({ minLength: 1, maxLength: 100 }) });

export const MoveBody = t.Object(
  { workflowIds: t.Array(Uuid, { minItems: 1, maxItems: 500 }), folderId: Nullable(Uuid) },
  { ...strict, description: "folderId null moves the workflows out of any folder" },
);

export const WorkflowExport = t.Object(
  {
    weftExport: t.Literal(1),
    name: t.String(),
    description: t.Optional(t.String()),
    tags: t.Optional(Tags),
    definition: FlowVersion,
    variables: t.Optional(
      t.Array(
        t.Object(
          {
            name: t.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$" }),
            value: t.Any(),
            secret: t.Boolean(),
            description: t.Optional(t.String({ maxLength: 500 })),
          },
          strict,
        ),
        { maxItems: 200 },
      ),
    ),
    exportedAt: t.Optional(DateTime),
  },
  { ...strict, $id: "WorkflowExport", description: "connection ids and secret values are removed on export" },
);
export type WorkflowExportT = Static<typeof WorkflowExport>;

export const ImportBody = t.Composite(
  [
    t.Omit(WorkflowExport, ["name", "weftExport"]),
    t.Object({
      weftExport: t.Optional(t.Literal(1)),
      name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
      folderId: t.Optional(Nullable(Uuid)),
      dryRun: t.Optional(t.Boolean({ description: "answer what the import would do (200) and store nothing" })),
    }),
  ],
  { ...strict, description: "an export document; name and folderId may be overridden" },
);

/** What importing an export document would do (docs/import.md, "Preview"); nothing is written. */
export const WorkflowImportPreview = t.Object(
  {
    dryRun: t.Literal(true),
    plan: t.Array(t.Object({ action: t.Literal("create"), kind: t.Literal("workflow"), name: t.String() }), {
      description: "an export document always becomes one new draft",
    }),
    variables: t.Array(t.String(), { description: "the names of the variables it brings" }),
    /** What the publish gate would say of the new draft; a draft is stored whatever it says. */
    diagnostics: Diagnostics,
  },
  { $id: "WorkflowImportPreview" },
);
export type WorkflowImportPreviewT = Static<typeof WorkflowImportPreview>;

/** Workflows as files (docs/workflows-as-code.md): a folder as path → YAML text. */
const FileMap = t.Record(t.String({ minLength: 1, maxLength: 500 }), t.String(), {
  maxProperties: 10_000,
  description: "path → file text: connections.yaml, variables/all.yaml, workflows/[<folder>/]<name>.yaml",
});

export const WorkflowFilesExport = t.Object({ weftFormat: t.Literal(1), files: FileMap }, { $id: "WorkflowFiles" });

export const WorkflowFilesImportBody = t.Object(
  {
    files: FileMap,
    dryRun: t.Optional(t.Boolean({ description: "answer the plan and change nothing" })),
    prune: t.Optional(t.Boolean({ description: "also delete the workspace's workflows the files do not hold" })),
  },
  { ...strict, description: "paths outside connections.yaml, variables/ and workflows/ are ignored" },
);

export const FileProblem = t.Object({
  file: t.String(),
  path: t.String({ description: "where in the file: a dotted path such as steps.2.config.url, or line L:C for YAML syntax" }),
  message: t.String(),
});

export const WorkflowFilesImportResult = t.Object(
  {
    dryRun: t.Boolean(),
    applied: t.Boolean({ description: "false for a dry run" }),
    plan: t.Array(
      t.Object({
        action: t.Union([t.Literal("create"), t.Literal("update"), t.Literal("unchanged"), t.Literal("delete")]),
        kind: t.Union([t.Literal("folder"), t.Literal("connection"), t.Literal("workflow")]),
        name: t.String(),
        path: t.Optional(t.String()),
        id: t.Optional(t.String()),
      }),
    ),
    warnings: t.Array(FileProblem, { description: "the gate's warnings, by file; they do not stop an import" }),
    secretsToSet: t.Array(
      t.Object({
        id: t.String({ description: "the workflow's id" }),
        workflow: t.String({ description: "the workflow's name" }),
        path: t.String({ description: "its file" }),
        name: t.String({ description: "the secret variable" }),
      }),
      {
        description:
          "secret variables the files name that their workflow holds no value for in this workspace: stored empty (values are never in files); set each with PUT /api/workflows/{id}/variables. Listed by a dry run too, before anything changes",
      },
    ),
  },
  { $id: "WorkflowFilesImportResult" },
);

/** An import from another tool (docs/import.md): the foreign file and what to do with it. */
export const ForeignImportBody = t.Object(
  {
    format: t.Union([t.Literal("activepieces"), t.Literal("n8n")], { description: "activepieces: a flow export or template file; n8n: a workflow JSON" }),
    source: t.Record(t.String(), t.Any(), { description: "the foreign file's JSON, as exported by the other tool" }),
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "defaults to the file's name" })),
    folderId: t.Optional(Nullable(Uuid)),
    dryRun: t.Optional(t.Boolean({ description: "answer the report and the definition; store nothing" })),
  },
  strict,
);

export const ImportReportSchema = t.Object(
  {
    format: t.Union([t.Literal("activepieces"), t.Literal("n8n")]),
    entries: t.Array(
      t.Object({
        node: t.String(),
        type: t.String(),
        outcome: t.Union([t.Literal("mapped"), t.Literal("approximated"), t.Literal("not_mapped")]),
        step: t.Optional(t.String()),
        note: t.Optional(t.String()),
      }),
    ),
    missingPieces: t.Array(t.Object({ package: t.String(), version: t.Optional(t.String()), command: t.String() })),
    hasPlaceholders: t.Boolean({ description: "a placeholder step stands in for something: the draft does not pass the publish gate until it is replaced" }),
  },
  { $id: "ImportReport" },
);

export const ForeignImportResult = t.Object({
  dryRun: t.Boolean(),
  report: ImportReportSchema,
  definition: t.Any({ description: "the converted definition (FlowVersion)" }),
  workflow: t.Optional(Workflow),
});
export type ForeignImportBodyT = Static<typeof ForeignImportBody>;
