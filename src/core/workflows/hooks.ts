/**
 * What other parts of Weft learn about a workflow's lifecycle. The triggers code registers hooks
 * (`deps.lifecycleHooks.push({...})`) to start and stop schedules, webhooks and pollers.
 *
 * - onPublish runs after the workflow is live (also on a republish: keep polling baselines then).
 *   An error it throws reaches the caller of publish; the workflow stays live.
 * - onUnpublish runs after the workflow is paused (or before it is deleted while live); errors are
 *   logged, never returned (external de-registration is best-effort: docs/api.md, section 6).
 * - onWebhookRotated runs after the token changed; the old token no longer resolves.
 */
import type { FlowVersionT } from "../../schema/workflow";
import type { WorkflowT } from "../../schema/workflow-record";

export interface PublishedVersion {
  id: string;
  number: number;
  definition: FlowVersionT;
}

export interface LifecycleHooks {
  onPublish?(workflow: WorkflowT, version: PublishedVersion): void | Promise<void>;
  onUnpublish?(workflow: WorkflowT): void | Promise<void>;
  onWebhookRotated?(workflow: WorkflowT, previousToken: string | null): void | Promise<void>;
}
