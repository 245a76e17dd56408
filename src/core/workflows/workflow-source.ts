/**
 * The engine's WorkflowSource (src/engine/workflow-source.ts) served by the workflows core: what a run
 * executes, its variables and secrets, and the live workflows with event triggers.
 */
import type { RunnableWorkflow, WorkflowSource, Environment } from "../../engine/workflow-source";
import type { RunDefinition, Workflows } from "./workflows";

/**
 * How long a production run's workflow lookup is reused. Publish and unpublish invalidate at once; the
 * TTL bounds how long a renamed workflow or changed variable may take to reach production runs.
 */
const PRODUCTION_CACHE_MS = 1_000;

/** How old a list of live workflows the event triggers' look-up may take (Workflows.liveWorkflows). */
const LIVE_REUSE_MS = 1_000;

export function workflowSourceFrom(workflows: Workflows): WorkflowSource {
  const production = new Map<string, { at: number; value: RunnableWorkflow }>();
  const cached = (workspaceId: string | null, workflowId: string, environment: Environment) => {
    if (environment !== "production") return undefined;
    const hit = production.get(workflowId);
    return hit && workflows.clock.now() - hit.at < PRODUCTION_CACHE_MS && (workspaceId === null || hit.value.workspaceId === workspaceId)
      ? hit.value
      : undefined;
  };
  const keep = (environment: Environment, value: RunnableWorkflow) => {
    if (environment !== "production") return value;
    if (production.size > 10_000) production.clear();
    production.set(value.workflowId, { at: workflows.clock.now(), value });
    return value;
  };
  return {
    async forRun(workspaceId, workflowId, environment, within) {
      const hit = cached(workspaceId, workflowId, environment);
      if (hit) return hit;
      const rd =
        workspaceId === null
          ? await workflows.definitionForRunAnyWorkspace(workflowId, environment, within)
          : await workflows.definitionForRun(workspaceId, workflowId, environment, within);
      return keep(environment, runnableOf(rd, environment));
    },
    invalidate(workflowId) {
      if (workflowId === undefined) production.clear();
      else production.delete(workflowId);
    },
    variablesFor(workflowId, definition) {
      return workflows.editor.runVariablesAndSecrets(workflowId, definition);
    },
    async liveWithTriggerTypes(types) {
      const wanted = new Set(types);
      return (await workflows.liveWorkflows(LIVE_REUSE_MS))
        .filter(({ version }) => wanted.has(version.definition.trigger.type))
        .map(({ workflow, version }) => ({ workflowId: workflow.id, workspaceId: workflow.workspaceId, trigger: version.definition.trigger }));
    },
  };
}

function runnableOf(rd: RunDefinition, environment: Environment): RunnableWorkflow {
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
}
