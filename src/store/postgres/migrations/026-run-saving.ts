/**
 * As SQLite's 026 (../../sqlite/migrations/026-run-saving.ts): `run_unsaved` counts the finished runs whose row
 * was not kept (settings.saveRuns "none"; docs/engine.md, "Run saving"). Kept as run_hours is since migration 15:
 * the run writer adds a batch's runs in its transaction's slot (txid_current(): no two lanes' transactions touch
 * one row), and weft_fold_run_counts folds the slots into slot 0, so the rows a count sums stay few. The fold is
 * migration 25's with run_unsaved added. The whole migration is one transaction.
 */
import { fold, foldRunCounts } from "./015-run-count-deltas";
import { FOLDS } from "./025-run-tag-counts";

export default {
  version: 26,
  name: "run-saving",
  sql: `
CREATE TABLE run_unsaved (
  workspace_id TEXT COLLATE "C" NOT NULL,
  workflow_id TEXT COLLATE "C" NOT NULL,
  hour BIGINT NOT NULL,
  environment TEXT COLLATE "C" NOT NULL,
  trigger_type TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  n BIGINT NOT NULL,
  slot BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, hour, environment, workflow_id, status, trigger_type, slot)
);
CREATE INDEX run_unsaved_deltas ON run_unsaved(slot) WHERE slot <> 0;

-- Migration 25's fold, run_unsaved's slots included.
${foldRunCounts(
  "CREATE OR REPLACE",
  `${FOLDS}
${fold("run_unsaved", ["hour", "environment", "workflow_id", "status", "trigger_type"])}`,
)}
`,
};
