/** Runs: start a workflow when another run fails (error workflows) or finishes. */
import { definePiece, listOf, Property, trigger } from "../../src/pieces-sdk";

const FINISHED = ["completed", "failed", "cancelled"];

const runSample = (status: string) => ({
  run: {
    id: "00000000-0000-4000-8000-000000000001",
    workflowId: "00000000-0000-4000-8000-000000000002",
    workflowName: "Sync orders",
    status,
    triggerType: "cron",
    environment: "production",
    startedAt: "2025-01-06T09:00:00.000Z",
    finishedAt: "2025-01-06T09:00:01.200Z",
    durationMs: 1200,
    errorMessage: status === "failed" ? "step fetch: GET https://api.example.com/orders answered 503" : undefined,
  },
});

export default definePiece({
  id: "runs",
  name: "Runs",
  version: "1.0.0",
  icon: "🔁",
  description: "React to other runs: failures and completions",
  triggers: [
    trigger({
      id: "on_error",
      name: "On run error",
      description: "Starts when a run of a workflow fails (workflows whose settings.errorWorkflowId names this one, or those listed)",
      type: "error",
      props: {
        workflow_ids: Property.array({
          displayName: "Workflows",
          description: "Only failures of these workflows; empty = any workflow of the workspace",
          items: { type: "string", format: "uuid" },
        }),
      },
      sampleData: runSample("failed"),
      matches: (config, event) => {
        if (event.status !== "failed") return false;
        const ids = listOf(config.workflow_ids);
        return ids.length === 0 || ids.includes(event.workflowId);
      },
    }),
    trigger({
      id: "on_run_finished",
      name: "On run finished",
      description: "Starts when a run of the listed workflows finishes with one of the listed statuses",
      type: "run_finished",
      props: {
        workflow_ids: Property.array({
          displayName: "Workflows",
          description: "Empty = any workflow of the workspace",
          items: { type: "string", format: "uuid" },
        }),
        statuses: Property.staticMultiSelect({ displayName: "Statuses", description: "Empty = any final status", options: FINISHED }),
      },
      sampleData: runSample("completed"),
      matches: (config, event) => {
        const statuses = listOf(config.statuses);
        if (!FINISHED.includes(event.status) || (statuses.length > 0 && !statuses.includes(event.status))) return false;
        const ids = listOf(config.workflow_ids);
        return ids.length === 0 || ids.includes(event.workflowId);
      },
    }),
  ],
});
