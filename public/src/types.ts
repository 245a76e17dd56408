/** The shapes the UI reads from the API (src/schema/ declares them); only the fields the screens use. */
import type { ProjectedProperty } from "../../src/core/pieces/projection";

export interface Condition {
  field: unknown;
  operator: string;
  value?: unknown;
}
export interface Branch {
  name: string;
  conditions: Condition[][];
  firstAction?: ActionNode;
}

export interface StepNode {
  name: string;
  displayName?: string;
  type: string;
  pieceId?: string;
  pieceVersion?: string;
  actionId?: string;
  config?: Record<string, unknown>;
  connectionId?: string;
  valid?: boolean;
}

export interface ActionNode extends StepNode {
  skip?: boolean;
  nextAction?: ActionNode;
  branches?: Branch[];
  firstLoopAction?: ActionNode;
  onErrorAction?: ActionNode;
}

export interface TriggerNode extends StepNode {
  nextAction?: ActionNode;
}

export interface Definition {
  schemaVersion: 2;
  trigger: TriggerNode;
  settings?: Record<string, unknown>;
  variables?: Record<string, unknown>;
  annotations?: unknown;
  pinnedData?: Record<string, unknown>;
}

export interface Workflow {
  id: string;
  name: string;
  description: string;
  definition: Definition;
  status: "draft" | "active" | "paused";
  triggerType: string;
  webhookToken: string | null;
  webhookUrl?: string | null;
  latestVersionId: string | null;
  latestVersionNumber?: number | null;
  definitionRev: number;
  hasUnpublishedChanges: boolean;
  folderId: string | null;
  tags: string[];
  testPayloads?: Record<string, unknown>;
  pinnedData?: Record<string, { data: unknown; pinnedAt: string; stale: boolean }>;
  createdAt: string;
  updatedAt: string;
  lastRun: { status: string; startedAt: string } | null;
}

export interface Diagnostic {
  path: string;
  code: string;
  message: string;
  allowed?: unknown[];
}
export interface Diagnostics {
  valid: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
}

export interface VersionSummary {
  id: string;
  number: number;
  triggerType: string;
  live: boolean;
  createdAt: string;
  createdBy: string | null;
}

export interface RunStep {
  id: string;
  nodeId: string;
  pieceId?: string;
  actionId?: string;
  displayName?: string;
  status: string;
  inputData?: unknown;
  outputData?: unknown;
  errorMessage?: string | null;
  retryCount?: number;
  startedAt?: string | null;
  finishedAt?: string | null;
  durationMs?: number | null;
}

export interface Run {
  id: string;
  workflowId: string;
  status: string;
  triggerType: string;
  triggerData?: unknown;
  environment: string;
  startedAt?: string | null;
  finishedAt?: string | null;
  durationMs?: number | null;
  errorMessage?: string | null;
  tags?: string[];
  steps?: RunStep[];
  workflowName?: string;
  versionNumber?: number | null;
  executedVersionNumber?: number | null;
  stepTotal?: number;
  stepFailed?: number;
  retryOfRunId?: string | null;
  retriedByRunId?: string | null;
  waitStep?: string | null;
  resumeAt?: string | null;
}

export interface PieceListItem {
  id: string;
  name: string;
  version: string;
  description: string;
  /** An emoji, a data:image URL or an https logo URL; null when none. */
  icon?: string | null;
  auth: string | null;
  actions: string[];
  triggers: string[];
}
export interface PieceDetail {
  id: string;
  name: string;
  version: string;
  description: string;
  auth: null | { kind: string; [key: string]: unknown };
  actions: Array<{ id: string; name: string; description: string; requiresAuth?: boolean }>;
  triggers: Array<{ id: string; name: string; description: string; type: string }>;
}

/** The projection and its properties (docs/pieces.md "Schema projections") exactly as the server declares them. */
export type { Projection } from "../../src/core/pieces/projection";
/** The projection folds a property's displayName into its description; the editor still reads it when present. */
export type Property = ProjectedProperty & { displayName?: string };

export interface Connection {
  id: string;
  name?: string;
  pieceId?: string;
  /** oauth2, api_key, basic or custom. */
  authKind?: string;
  status: string;
  /** Why the status is "error" (e.g. the refresh token was rejected). */
  statusMessage?: string | null;
  tokenExpiresAt?: string | null;
  createdAt?: string;
  errorMessage?: string | null;
}
