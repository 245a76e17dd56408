/**
 * Run retention's questions on PostgreSQL (../run-retention.ts says what each answers), each one awaited
 * statement. Runs are stored as ../run-layout.ts says: names as keys of run_names (looked up in the statement
 * itself), started_at in epoch milliseconds, ties broken by `seq`; rows come back with their names' keys,
 * read before they are decoded (./run-names.ts). A kept count is the sum over its slots (migration 15).
 * PostgreSQL's autovacuum returns the space of deleted rows on its own: no free pages here.
 */
import type { RunRetentionRepository, UnfinishedPosition } from "../run-retention";
import { CompactLayout } from "../run-layout";
import type { RunPosition } from "../run-rows";
import type { PostgresConnection } from "./connection";
import type { PostgresRunNames } from "./run-names";

interface PositionRow {
  id: string;
  started_at: number;
  tie: number;
}

/** The key of a name, in a statement ($n: the name). */
const keyOf = (param: string) => `(SELECT key FROM run_names WHERE name = ${param})`;

export class PostgresRunRetention implements RunRetentionRepository {
  private readonly layout: CompactLayout;

  constructor(
    private readonly c: PostgresConnection,
    private readonly names: PostgresRunNames,
  ) {
    this.layout = new CompactLayout(names);
  }

  async runCountsByWorkflow() {
    const rows = await this.c.all<{ workspace_id: number; workflow_id: number; n: number }>(
      `SELECT workspace_id, workflow_id, CAST(COALESCE(SUM(n), 0) AS BIGINT) AS n FROM run_counts WHERE tag = '' GROUP BY workspace_id, workflow_id HAVING SUM(n) > 0`,
    );
    await this.names.loadKeys(rows);
    return rows.map((row) => ({ workspaceId: this.names.name(row.workspace_id), workflowId: this.names.name(row.workflow_id), runs: Number(row.n) }));
  }

  async oldestFinishedOf(workflowId: string, limit: number, beforeIso?: string, after?: RunPosition) {
    const params: unknown[] = [workflowId];
    const bind = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const before = beforeIso === undefined ? "" : ` AND started_at < ${bind(this.layout.time(beforeIso))}::bigint`;
    const from = after ? this.after(after, bind) : "";
    const rows = await this.c.all<PositionRow>(
      `SELECT id, started_at, seq AS tie FROM runs WHERE workflow_id = ${keyOf("$1")}${before}${from}
        AND status NOT IN (${this.layout.unfinished}) ORDER BY started_at, seq LIMIT ${bind(limit)}`,
      params,
    );
    return rows.map((row) => this.position(row));
  }

  async oldestFinishedIn(workspaceId: string, exceptWorkflows: string[], limit: number, after?: RunPosition) {
    const params: unknown[] = [workspaceId];
    const bind = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const from = after ? this.after(after, bind) : "";
    // A workflow without a stored name has no runs to leave out (its name finds no key).
    const except =
      exceptWorkflows.length > 0
        ? ` AND workflow_id NOT IN (SELECT key FROM run_names WHERE name IN (SELECT jsonb_array_elements_text(${bind(JSON.stringify(exceptWorkflows))}::text::jsonb)))`
        : "";
    const rows = await this.c.all<PositionRow>(
      `SELECT id, started_at, seq AS tie FROM runs WHERE workspace_id = ${keyOf("$1")}${from}
        AND status NOT IN (${this.layout.unfinished})${except} ORDER BY started_at, seq LIMIT ${bind(limit)}`,
      params,
    );
    return rows.map((row) => this.position(row));
  }

  async unfinishedPositions(): Promise<UnfinishedPosition[]> {
    const rows = await this.c.all<PositionRow & { workflow_id: number; workspace_id: number }>(
      `SELECT id, started_at, seq AS tie, workflow_id, workspace_id FROM runs WHERE status IN (${this.layout.unfinished})`,
    );
    await this.names.loadKeys(rows);
    return rows.map((row) => ({ ...this.position(row), workflowId: this.names.name(row.workflow_id), workspaceId: this.names.name(row.workspace_id) }));
  }

  async freePages() {
    return 0;
  }

  async ensureIncrementalVacuum(_maxBytes: number) {
    return { enabled: true, bytes: 0 };
  }

  /**
   * Runs after `after` in start order: a range on the index's started_at (a row-value or OR comparison would
   * not bound the scan), ties broken by seq. As sqlite/run-store.ts's afterPosition.
   */
  private after(after: RunPosition, bind: (value: unknown) => string): string {
    const started = this.layout.time(after.startedAt);
    const [from, tie] = [bind(started), bind(this.layout.tieValue(after.tie))];
    return ` AND started_at >= ${from}::bigint AND NOT (started_at = ${from}::bigint AND seq <= ${tie}::bigint)`;
  }

  /** A selected position with its values as the API has them. */
  private position(row: PositionRow): RunPosition {
    return { id: row.id, startedAt: new Date(row.started_at).toISOString(), tie: this.layout.tieText(row.tie) };
  }
}
