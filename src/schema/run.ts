/** Run and step records (docs/engine.md "What a run records") and the Runs API's queries and bodies. */
import { Type } from "@sinclair/typebox";
import { t, type Static } from "elysia";

const Nullable = <T extends ReturnType<typeof t.String>>(schema: T) => t.Union([schema, t.Null()]);
const NullableInt = t.Union([Type.Integer(), t.Null()]);
const NullableString = t.Union([t.String(), t.Null()]);

export const RUN_STATUSES = ["pending", "running", "completed", "failed", "cancelled", "paused"] as const;
export const RUN_TRIGGER_TYPES = ["manual", "webhook", "cron", "poll", "error", "run_finished", "event", "api", "mcp", "subflow", "subscription"] as const;
export const STEP_STATUSES = ["pending", "running", "completed", "failed", "skipped", "paused", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type RunTriggerType = (typeof RUN_TRIGGER_TYPES)[number];
export type StepStatus = (typeof STEP_STATUSES)[number];
export type Environment = "production" | "test";

export const Step = t.Object(
  {
    id: t.String({ format: "uuid" }),
    runId: t.String({ format: "uuid" }),
    nodeId: t.String({ description: "the step's name in the definition" }),
    pieceId: NullableString,
    actionId: NullableString,
    displayName: NullableString,
    status: t.String({ description: STEP_STATUSES.join(", ") }),
    inputData: t.Any({ description: "the resolved config, secrets masked; capped in size" }),
    outputData: t.Any({ description: "the step's output; over the size cap it is replaced by {truncated: true, sizeBytes, limitBytes, preview}" }),
    errorMessage: NullableString,
    retryCount: Type.Integer(),
    startedAt: Nullable(t.String({ format: "date-time" })),
    finishedAt: Nullable(t.String({ format: "date-time" })),
    durationMs: NullableInt,
  },
  { $id: "Step" },
);

export const Run = t.Object(
  {
    id: t.String({ format: "uuid" }),
    workflowId: t.String({ format: "uuid" }),
    workspaceId: t.String({ format: "uuid" }),
    orgId: t.String({ format: "uuid" }),
    status: t.String({ description: RUN_STATUSES.join(", ") }),
    triggerType: t.String({ description: RUN_TRIGGER_TYPES.join(", ") }),
    triggerData: t.Any({ description: "the trigger's output: always has body; webhook runs add method, headers, query" }),
    startedAt: t.String({ format: "date-time", description: "when the run was triggered (queued)" }),
    finishedAt: Nullable(t.String({ format: "date-time" })),
    durationMs: NullableInt,
    errorMessage: NullableString,
    tags: t.Array(t.String()),
    environment: t.String({ description: "production or test" }),
    steps: t.Optional(t.Array(Step)),
    stepsOmitted: t.Optional(
      Type.Integer({
        description: "run detail of a run with more than 2,000 steps (a long loop): how many step rows between the first and the last 1,000 are left out",
      }),
    ),
    versionId: NullableString,
    executedVersionId: NullableString,
    versionNumber: NullableInt,
    executedVersionNumber: NullableInt,
    startedFromStep: NullableString,
    retryOfRunId: NullableString,
    retriedByRunId: NullableString,
    parentRunId: NullableString,
    workflowName: t.String(),
    workflowTriggerType: NullableString,
    stepTotal: Type.Integer(),
    stepFailed: Type.Integer(),
    waitStep: NullableString,
    resumeMode: NullableString,
    resumeAt: Nullable(t.String({ format: "date-time" })),
    waiting: t.Optional(
      t.Object(
        { step: t.String(), reason: t.String({ description: 'what the step waits for, e.g. "a sandbox"' }), since: t.String({ format: "date-time" }) },
        { description: "present while a running step waits for something it does not control (a free sandbox process); shown live, not stored" },
      ),
    ),
  },
  { $id: "Run" },
);

export type RunT = Static<typeof Run>;
export type StepT = Static<typeof Step>;

export const RunListQuery = t.Object(
  {
    page: t.Optional(t.String({ description: "1-based; values below 1 or unparseable become 1" })),
    limit: t.Optional(t.String({ description: "1–100, default 20; anything else becomes 20" })),
    status: t.Optional(t.String({ description: `${RUN_STATUSES.join(", ")}; another value is ignored` })),
    environment: t.Optional(t.String({ description: "production (default), test or all; anything else means production" })),
    triggerType: t.Optional(t.String({ description: `${RUN_TRIGGER_TYPES.join(", ")}; another value is ignored` })),
    workflowId: t.Optional(t.String({ description: "a workflow's uuid; a non-UUID is ignored" })),
    tag: t.Optional(t.String({ description: "exact tag match" })),
    sort: t.Optional(
      t.String({ description: "oldest = oldest start first; duration = longest first, runs without duration last; otherwise newest start first" }),
    ),
  },
  { additionalProperties: true },
);

export const RunList = t.Object({
  data: t.Array(Run),
  pagination: t.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer(), totalPages: Type.Integer() }),
});
export type RunListT = Static<typeof RunList>;

export const RunCountsQuery = t.Object(
  {
    days: t.Optional(t.String({ description: "days counted back from today (UTC), 1–90, default 14; anything else becomes 14" })),
    status: t.Optional(t.String({ description: `${RUN_STATUSES.join(", ")}; another value is ignored` })),
    environment: t.Optional(t.String({ description: "production (default), test or all; anything else means production" })),
    triggerType: t.Optional(t.String({ description: `${RUN_TRIGGER_TYPES.join(", ")}; another value is ignored` })),
    workflowId: t.Optional(t.String({ description: "a workflow's uuid; a non-UUID is ignored" })),
  },
  { additionalProperties: true },
);

const StatusCounts = t.Record(t.String(), Type.Integer(), { description: "runs per status; a status without runs is left out" });

export const RunCounts = t.Object({
  data: t.Object({
    total: Type.Integer({ description: "runs started in the days counted, kept or not" }),
    unsaved: Type.Integer({ description: "of them, runs counted without their row (their workflow's settings.saveRuns is none)" }),
    days: t.Array(
      t.Object({
        day: t.String({ description: "YYYY-MM-DD (UTC), oldest first, one entry per day counted" }),
        counts: StatusCounts,
        unsaved: Type.Integer({ description: "of the day's runs, those counted without their row" }),
      }),
    ),
  }),
});

export const RetryBody = t.Object(
  {
    from: t.Optional(
      t.Union([t.Literal("failed_step"), t.Literal("start")], {
        description: "failed_step (default): reuse the outputs of the steps before the failure; start: run everything again",
      }),
    ),
    version: t.Optional(
      t.Union([t.Literal("original"), t.Literal("latest")], {
        description: "original (default): the definition the run executed; latest: the live version (production) or the draft (test)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type RetryBodyT = Static<typeof RetryBody>;

export const RunWorkflowQuery = t.Object(
  {
    environment: t.Optional(t.String({ description: "test or production; anything but production is a test run (never production by omission)" })),
    wait: t.Optional(t.String({ description: "0–30: wait up to this many seconds for the run to finish" })),
  },
  { additionalProperties: true },
);
