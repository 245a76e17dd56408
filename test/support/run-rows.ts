/**
 * Run and step rows as the store holds them, for tests that write rows directly (the run writer, the list's
 * counts): a finished one-step webhook run by default, every field overridable.
 */
import type { RunRow, StepRow } from "../../src/store/run-rows";

export function runRow(id: string, overrides: Partial<RunRow> = {}): RunRow {
  return {
    id,
    workspace_id: "ws",
    org_id: "org",
    workflow_id: "wf",
    workflow_name: "wf",
    workflow_trigger_type: "webhook",
    status: "completed",
    trigger_type: "webhook",
    trigger_data: "{}",
    environment: "production",
    version_id: "v",
    version_number: 1,
    executed_version_id: "v",
    executed_version_number: 1,
    definition_hash: "h1",
    started_at: "2026-11-22T00:00:00.000Z",
    finished_at: "2026-11-22T00:00:00.001Z",
    duration_ms: 1,
    error_message: null,
    tags: "[]",
    started_from_step: null,
    retry_of_run_id: null,
    retried_by_run_id: null,
    step_total: 1,
    step_failed: 0,
    wait_step: null,
    resume_mode: null,
    resume_at: null,
    resume_token_hash: null,
    parent_run_id: null,
    depth: 0,
    state: null,
    response: null,
    event_seq: 2,
    owner: null,
    ...overrides,
  };
}

export function stepRow(runId: string, overrides: Partial<StepRow> = {}): StepRow {
  return {
    id: `${runId}-s`,
    run_id: runId,
    seq: 0,
    node_id: "a",
    node_type: "PIECE",
    piece_id: "data",
    action_id: "set_fields",
    display_name: "a",
    status: "completed",
    input_data: "{}",
    output_data: JSON.stringify({ ok: true }),
    output_truncated: 0,
    error_message: null,
    retry_count: 0,
    started_at: "2026-11-22T00:00:00.000Z",
    finished_at: "2026-11-22T00:00:00.001Z",
    duration_ms: 0,
    ...overrides,
  };
}
