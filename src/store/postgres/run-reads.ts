/**
 * The reads of runs on PostgreSQL (../run-read-repository.ts says what each answers): written for PostgreSQL,
 * every query awaited on the port's pool, so a read delays only its caller. Rows come back as the layout
 * stores them (../run-layout.ts) and are decoded once their names' keys and their records' dictionaries are
 * read (./run-records-read.ts); the list is ./run-list.ts.
 */
import type { LastRun, RunCountFilter, RunReadRepository } from "../run-read-repository";
import { mergeSteps, type StepRow, STEP_COLUMNS } from "../run-records";
import { type RunListFilter, type RunRow, ROW_COLUMNS, STORED_COLUMNS } from "../run-rows";
import type { PostgresConnection } from "./connection";
import { PostgresRunList } from "./run-list";
import type { PostgresRunNames } from "./run-names";
import { RunRowReader, type WithRecord } from "./run-records-read";

/** run_steps' columns as RunStore reads them (not the `rowid` PostgreSQL's table has besides). */
const STEPS = STEP_COLUMNS.join(", ");

export class PostgresRunReads implements RunReadRepository {
  private readonly reader: RunRowReader;
  private readonly runList: PostgresRunList;

  constructor(
    private readonly c: PostgresConnection,
    names: PostgresRunNames,
  ) {
    this.reader = new RunRowReader(c, names);
    this.runList = new PostgresRunList(c, this.reader);
  }

  list(filter: RunListFilter) {
    return this.runList.list(filter);
  }

  hourCounts(filter: RunCountFilter, fromHour: number) {
    return this.runList.hourCounts(filter, fromHour);
  }

  async getRow(id: string): Promise<RunRow | null> {
    const rows = await this.c.all<RunRow & WithRecord>(`SELECT ${STORED_COLUMNS} FROM runs WHERE id = $1`, [id]);
    return ((await this.reader.decodeAll(rows))[0] as RunRow | undefined) ?? null;
  }

  async steps(runId: string): Promise<StepRow[]> {
    const packed = await this.packedSteps(runId);
    const rows = await this.stepRows(runId);
    return packed ? mergeSteps(packed, rows) : rows;
  }

  async stepsBounded(runId: string, max: number): Promise<{ steps: StepRow[]; omitted: number }> {
    const half = Math.floor(max / 2);
    const packed = await this.packedSteps(runId);
    if (packed) {
      const all = mergeSteps(packed, await this.stepRows(runId));
      if (all.length <= max) return { steps: all, omitted: 0 };
      return { steps: [...all.slice(0, half), ...all.slice(all.length - (max - half))], omitted: all.length - max };
    }
    const total = Number((await this.c.get<{ n: number }>("SELECT count(*) AS n FROM run_steps WHERE run_id = $1", [runId]))?.n ?? 0);
    if (total <= max) return { steps: await this.stepRows(runId), omitted: 0 };
    const head = await this.c.all<StepRow>(`SELECT ${STEPS} FROM run_steps WHERE run_id = $1 ORDER BY seq, rowid LIMIT $2`, [runId, half]);
    const tail = await this.c.all<StepRow>(
      `SELECT ${STEPS} FROM (SELECT rowid AS r, ${STEPS} FROM run_steps WHERE run_id = $1 ORDER BY seq DESC, rowid DESC LIMIT $2) AS last ORDER BY seq, r`,
      [runId, max - half],
    );
    return { steps: [...head, ...tail], omitted: total - head.length - tail.length };
  }

  async definition(hash: string): Promise<string | null> {
    return (await this.c.get<{ definition: string }>("SELECT definition FROM run_definitions WHERE hash = $1", [hash]))?.definition ?? null;
  }

  async has(id: string): Promise<boolean> {
    return (await this.c.get("SELECT 1 AS found FROM runs WHERE id = $1", [id])) !== null;
  }

  /** One statement for every workflow: each one's newest run from its list index (started_at, then seq). */
  async lastRuns(workflowIds: string[]): Promise<Map<string, LastRun>> {
    const out = new Map<string, LastRun>();
    const { names, layout } = this.reader;
    await names.loadStored(workflowIds);
    const keys = [...new Set(workflowIds.map((id) => layout.find(id)).filter((key) => key !== undefined))];
    if (keys.length === 0) return out;
    const rows = await this.c.all<{ workflow_id: number; status: number; started_at: number }>(
      `SELECT w.key AS workflow_id, last.status, last.started_at FROM (SELECT jsonb_array_elements_text($1::text::jsonb)::integer AS key) AS w
        CROSS JOIN LATERAL (SELECT status, started_at FROM runs WHERE workflow_id = w.key ORDER BY started_at DESC, seq DESC LIMIT 1) AS last`,
      [JSON.stringify(keys)],
    );
    for (const row of rows) {
      const run = layout.decode(row as Record<string, unknown>) as { workflow_id: string; status: string; started_at: string };
      out.set(run.workflow_id, { status: run.status, startedAt: run.started_at });
    }
    // In the order asked, as RunStore answers.
    return new Map(workflowIds.flatMap((id) => (out.has(id) ? [[id, out.get(id)!] as const] : [])));
  }

  async recentTriggerData(workflowId: string, triggerType: string, limit: number): Promise<unknown[]> {
    const { names, layout } = this.reader;
    await names.loadStored([workflowId, triggerType]);
    const workflow = layout.find(workflowId);
    const trigger = layout.find(triggerType);
    if (workflow === undefined || trigger === undefined) return [];
    const rows = await this.c.all<{ id: string; trigger_data: string; packed_steps: Uint8Array | null }>(
      "SELECT id, trigger_data, packed_steps FROM runs WHERE workflow_id = $1 AND trigger_type = $2 ORDER BY started_at DESC, seq DESC LIMIT $3",
      [workflow, trigger, limit],
    );
    return (await this.reader.decodeAll(rows)).map((row) => JSON.parse(row.trigger_data));
  }

  async unfinished(): Promise<RunRow[]> {
    const rows = await this.c.all<RunRow>(`SELECT ${ROW_COLUMNS} FROM runs WHERE status IN (${this.reader.layout.unfinished}) ORDER BY id`);
    await this.reader.names.loadKeys(rows);
    return rows.map((row) => this.reader.layout.decode(row));
  }

  /** The steps a run's record holds, or undefined when it has none. */
  private async packedSteps(runId: string): Promise<StepRow[] | undefined> {
    const packed = (await this.c.get<{ packed_steps: Uint8Array }>("SELECT packed_steps FROM runs WHERE id = $1 AND packed_steps IS NOT NULL", [runId]))
      ?.packed_steps;
    return packed ? (await this.reader.record(runId, packed)).steps : undefined;
  }

  private stepRows(runId: string): Promise<StepRow[]> {
    return this.c.all<StepRow>(`SELECT ${STEPS} FROM run_steps WHERE run_id = $1 ORDER BY seq, rowid`, [runId]);
  }
}
