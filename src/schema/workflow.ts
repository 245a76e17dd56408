/**
 * FlowVersion: the definition tree (docs/api.md "1. Create a workflow"). Strict everywhere — an unknown key on any node,
 * branch, condition or settings object is refused — except `config`, `variables`, `pinnedData`
 * and `annotations`, whose contents belong to pieces and users.
 * Structural only: legal node types, operators, piece ids and step-name rules are checked by the
 * gate (src/core/workflows/validate.ts), which names the admissible values.
 */
import { Type } from "@sinclair/typebox";
import { t, type Static } from "elysia";

const strict = { additionalProperties: false } as const;

export const Config = t.Record(t.String(), t.Any(), { description: "the step's configuration; property names come from the piece's schema" });

export const Condition = t.Object(
  {
    field: t.Any({ description: "usually an expression such as {{fetch.output.body.count}}" }),
    operator: t.String({ description: "e.g. text_eq, number_lt; the full list is in docs/api.md" }),
    value: t.Optional(t.Any()),
  },
  { ...strict, $id: "Condition" },
);

const nodeFields = {
  name: t.String({ minLength: 1, maxLength: 100, description: "unique in the tree; later steps refer to it in expressions" }),
  displayName: t.Optional(t.String({ maxLength: 200 })),
  type: t.String({ description: "action: PIECE, ROUTER or LOOP_ON_ITEMS; trigger: manual, webhook, cron, poll, error, run_finished, callable" }),
  pieceId: t.Optional(t.String({ maxLength: 200 })),
  pieceVersion: t.Optional(t.String({ maxLength: 50, description: "pin; blank is filled with the served version" })),
  actionId: t.Optional(t.String({ maxLength: 200 })),
  config: t.Optional(Config),
  connectionId: t.Optional(t.String({ maxLength: 100 })),
  valid: t.Optional(t.Boolean()),
  webhookToken: t.Optional(t.Any({ description: "server-owned; accepted only to be stripped: the server mints it" })),
};

export const ActionNode = t.Recursive(
  (Self) =>
    t.Object(
      {
        ...nodeFields,
        skip: t.Optional(t.Boolean()),
        nextAction: t.Optional(Self),
        branches: t.Optional(
          t.Array(
            t.Object(
              {
                name: t.String({ minLength: 1, maxLength: 100 }),
                conditions: t.Array(t.Array(Condition), { description: "OR over groups, AND inside a group; [] is the fallback branch" }),
                firstAction: t.Optional(Self),
              },
              strict,
            ),
          ),
        ),
        firstLoopAction: t.Optional(Self),
        onErrorAction: t.Optional(Self),
      },
      strict,
    ),
  { $id: "ActionNode" },
);

export const TriggerNode = t.Object({ ...nodeFields, nextAction: t.Optional(ActionNode) }, { ...strict, $id: "TriggerNode" });

export const Settings = t.Object(
  {
    timeoutSeconds: t.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
    errorWorkflowId: t.Optional(t.String({ format: "uuid" })),
    concurrencyLimit: t.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    maintenanceMode: t.Optional(t.Boolean()),
    autoPublishFixes: t.Optional(t.Boolean()),
    retentionDays: t.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 36_500,
        description: "finished runs of this workflow older than this many days are deleted (0 keeps them); overrides the instance's WEFT_RUN_RETENTION_DAYS",
      }),
    ),
    retentionMaxRuns: t.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000_000,
        description:
          "at most this many runs of this workflow are kept, the oldest finished ones deleted first (0: no cap); they then do not count towards the workspace's WEFT_RUN_RETENTION_MAX",
      }),
    ),
    saveRuns: t.Optional(
      t.Union([t.Literal("all"), t.Literal("failed"), t.Literal("none")], {
        description:
          'what is kept of this workflow\'s finished runs (docs/engine.md, "Run saving"): all (the default); failed: a successful run keeps its row, status, times and counts, not its steps; none: nothing of a successful run is kept but its count (the run chart and GET /api/runs/counts still count it). Failed and cancelled runs are always kept whole',
        default: "all",
      }),
    ),
  },
  { ...strict, $id: "Settings" },
);

export const FlowVersion = t.Object(
  {
    schemaVersion: t.Literal(2),
    trigger: TriggerNode,
    settings: t.Optional(Settings),
    variables: t.Optional(t.Record(t.String(), t.Any())),
    annotations: t.Optional(t.Union([t.Null(), t.Any()])),
    pinnedData: t.Optional(t.Record(t.String(), t.Any(), { description: "moved into the workflow's pinned data (stored outside the definition) on save" })),
    webhookToken: t.Optional(t.Any({ description: "server-owned; accepted only to be stripped: the server mints it" })),
  },
  { ...strict, $id: "FlowVersion" },
);

export type ConditionT = Static<typeof Condition>;
export type ActionNodeT = Static<typeof ActionNode>;
export type TriggerNodeT = Static<typeof TriggerNode>;
export type SettingsT = Static<typeof Settings>;
/** What is kept of a workflow's finished runs (settings.saveRuns). */
export type SaveRuns = NonNullable<SettingsT["saveRuns"]>;
export type FlowVersionT = Static<typeof FlowVersion>;
export type BranchT = NonNullable<ActionNodeT["branches"]>[number];

export const ACTION_TYPES = ["PIECE", "ROUTER", "LOOP_ON_ITEMS"] as const;
export const TRIGGER_TYPES = ["manual", "webhook", "cron", "poll", "error", "run_finished", "callable", "subscription"] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export { CONDITION_OPERATORS, UNARY_OPERATORS } from "./operators";

/** The empty default tree: an unconfigured manual trigger (what a create without a definition gets). */
export const emptyDefinition = (): FlowVersionT => ({
  schemaVersion: 2,
  // A manual trigger has nothing to configure, so the empty tree passes the gate as it is.
  trigger: { name: "trigger", displayName: "Manual trigger", type: "manual", config: {}, valid: true },
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
});
