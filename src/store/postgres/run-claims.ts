/**
 * Claims on runs on PostgreSQL (../run-claims.ts says what each answers). A claim locks the rows it takes and
 * skips those another instance is taking (`FOR UPDATE SKIP LOCKED`), so two instances claiming at once never
 * take the same run. Rows come back as the layout stores them (../run-layout.ts) and are decoded once their
 * names' keys are read (./run-names.ts).
 */
import type { PausedGuard, RunClaimRepository } from "../run-claims";
import { CompactLayout, STATUS_CODES } from "../run-layout";
import { RUN_COLUMNS, type RunRow } from "../run-rows";
import type { PostgresConnection } from "./connection";
import type { PostgresRunNames } from "./run-names";

const UNFINISHED = `${STATUS_CODES.pending}, ${STATUS_CODES.running}, ${STATUS_CODES.paused}`;
const PAUSED = STATUS_CODES.paused;

export class PostgresRunClaims implements RunClaimRepository {
  private readonly layout: CompactLayout;

  constructor(
    private readonly c: PostgresConnection,
    private readonly names: PostgresRunNames,
  ) {
    this.layout = new CompactLayout(names);
  }

  async unfinishedHolders() {
    const rows = await this.c.all<{ owner: string | null }>(`SELECT DISTINCT owner FROM runs WHERE status IN (${UNFINISHED})`);
    const owners = rows.flatMap((row) => (row.owner === null ? [] : [row.owner]));
    return { owners, unowned: owners.length < rows.length };
  }

  async claim(me: string, from: string | null, limit: number, skip: readonly string[] = [], after = "") {
    const params: unknown[] = [me];
    const bind = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const held = from === null ? "owner IS NULL" : `owner = ${bind(from)}`;
    const skipped = skip.length ? ` AND id NOT IN (SELECT jsonb_array_elements_text(${bind(JSON.stringify(skip))}::text::jsonb))` : "";
    const beyond = after ? ` AND id > ${bind(after)}` : "";
    const rows = await this.c.all<RunRow>(
      `UPDATE runs SET owner = $1 WHERE id IN (
         SELECT id FROM runs WHERE status IN (${UNFINISHED}) AND ${held}${skipped}${beyond} ORDER BY id LIMIT ${bind(limit)} FOR UPDATE SKIP LOCKED
       ) RETURNING ${RUN_COLUMNS.join(", ")}`,
      params,
    );
    await this.names.loadKeys(rows);
    return rows.map((row) => this.layout.decode(row));
  }

  async release(runId: string, me: string) {
    await this.c.run("UPDATE runs SET owner = NULL WHERE id = $1 AND owner = $2", [runId, me]);
  }

  async takePaused(runId: string, me: string, guard: PausedGuard) {
    if ("tokenHash" in guard) {
      const sql = `UPDATE runs SET owner = $1, resume_token_hash = NULL WHERE id = $2 AND status = ${PAUSED} AND resume_token_hash = $3`;
      return (await this.c.run(sql, [me, runId, guard.tokenHash])) > 0;
    }
    if (guard.owner === null) return (await this.c.run(`UPDATE runs SET owner = $1 WHERE id = $2 AND status = ${PAUSED} AND owner IS NULL`, [me, runId])) > 0;
    return (await this.c.run(`UPDATE runs SET owner = $1 WHERE id = $2 AND status = ${PAUSED} AND owner = $3`, [me, runId, guard.owner])) > 0;
  }

  async takeRun(runId: string, me: string, from: string | null) {
    const held = from === null ? "owner IS NULL" : "owner = $3";
    const params = from === null ? [me, runId] : [me, runId, from];
    return (await this.c.run(`UPDATE runs SET owner = $1 WHERE id = $2 AND status IN (${UNFINISHED}) AND ${held}`, params)) > 0;
  }
}
