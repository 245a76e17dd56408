/**
 * The engine's WorkflowSource (src/engine/workflow-source.ts) served by the workflows core: what a run
 * executes, its variables and secrets, and the live workflows with event triggers.
 */
import type { RunnableWorkflow, WorkflowSource, Environment } from "../../engine/workflow-source";
import type { Workflows } from "./workflows";

/**
 * How long a production run's workflow lookup is reused. Publish and unpublish invalidate at once; the
 * TTL bounds how long a renamed workflow or changed variable may take to reach production runs.
 */
const PRODUCTION_CACHE_MS = 1_000;

/** How old a list of live workflows the event triggers' look-up may take (Workflows.liveWorkflows). */
const LIVE_REUSE_MS = 1_000;

export function workflowSourceFrom(workflows: Workflows): WorkflowSource {
  const production = new Map<string, { at: number; value: RunnableWorkflow }>();
  const source: WorkflowSource & { load(workspaceId: string | null, workflowId: string, environment: Environment): RunnableWorkflow } = {
    forRun(workspaceId, workflowId, environment) {
      if (environment === "production") {
        const hit = production.get(workflowId);
        if (hit && Date.now() - hit.at < PRODUCTION_CACHE_MS && (workspaceId === null || hit.value.workspaceId === workspaceId)) return hit.value;
      }
      const value = this.load(workspaceId, workflowId, environment);
      if (environment === "production") {
        if (production.size > 10_000) production.clear();
        production.set(workflowId, { at: Date.now(), value });
      }
      return value;
    },
    invalidate(workflowId) {
      if (workflowId === undefined) production.clear();
      else production.delete(workflowId);
    },
    load(workspaceId: string | null, workflowId: string, environment: Environment): RunnableWorkflow {
      const rd =
        workspaceId === null
          ? workflows.definitionForRunAnyWorkspace(workflowId, environment)
          : workflows.definitionForRun(workspaceId, workflowId, environment);
      const live = environment === "production";
      return {
        workflowId: rd.workflow.id,
        workspaceId: rd.workflow.workspaceId,
        orgId: rd.workflow.orgId,
        name: rd.workflow.name,
        triggerType: rd.workflow.triggerType,
        definition: rd.definition,
        versionId: rd.versionId,
        versionNumber: rd.versionNumber,
        executedVersionId: live ? rd.versionId : null,
        executedVersionNumber: live ? rd.versionNumber : null,
        variables: rd.variables ?? rd.definition.variables ?? {},
        secrets: rd.secrets,
        pinnedData: live ? {} : (rd.pinnedData ?? {}),
      };
    },
    variablesFor(workflowId, definition) {
      return workflows.editor.runVariablesAndSecrets(workflowId, definition);
    },
    liveWithTriggerTypes(types) {
      const wanted = new Set(types);
      return workflows
        .liveWorkflows(LIVE_REUSE_MS)
        .filter(({ version }) => wanted.has(version.definition.trigger.type))
        .map(({ workflow, version }) => ({ workflowId: workflow.id, workspaceId: workflow.workspaceId, trigger: version.definition.trigger }));
    },
  };
  return source;
}
