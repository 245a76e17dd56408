/**
 * What the engine needs from workflows, as one narrow interface: the definition a run executes
 * (production = published snapshot, test = draft; docs/api.md "4. Run"), its variables and which of them are
 * secret, and the live workflows with event triggers (error, run_finished).
 * The workflows core implements it (src/core/workflows/workflow-source.ts); tests may pass fakes.
 */
import type { FlowVersionT, TriggerNodeT } from "../schema/workflow";
import type { Repositories } from "../store/port";

export type Environment = "production" | "test";

export interface RunnableWorkflow {
  workflowId: string;
  workspaceId: string;
  orgId: string;
  name: string;
  triggerType: string;
  definition: FlowVersionT;
  /** The workflow's live version when the run was asked for (null when never published). */
  versionId: string | null;
  versionNumber: number | null;
  /** The version that executes: the published one in production, null for a draft (test). */
  executedVersionId: string | null;
  executedVersionNumber: number | null;
  variables: Record<string, unknown>;
  /** Values of secret variables: masked wherever a step shows them. */
  secrets: string[];
  /** Step name → pinned output (test runs only). */
  pinnedData: Record<string, unknown>;
}

export interface LiveTriggerWorkflow {
  workflowId: string;
  workspaceId: string;
  trigger: TriggerNodeT;
}

export interface WorkflowSource {
  /**
   * Rejects with AppError NOT_FOUND (unknown, or another workspace's) or NOT_PUBLISHED (production, never
   * published). `within`: the unit of work asking (`engine.enqueue`), whose own repositories it reads through.
   */
  forRun(workspaceId: string | null, workflowId: string, environment: Environment, within?: Repositories): Promise<RunnableWorkflow>;
  /** Variables and secret values for a definition the engine already holds (resumes, retries). */
  variablesFor(workflowId: string, definition: FlowVersionT): Promise<{ variables: Record<string, unknown>; secrets: string[] }>;
  /** Every live workflow whose trigger type is one of `types`. */
  liveWithTriggerTypes(types: string[]): Promise<LiveTriggerWorkflow[]>;
  /** Forget what is cached about a workflow (it was published, unpublished or changed). */
  invalidate(workflowId?: string): void;
}
