/** Claims on runs on SQLite (../run-claims.ts says what each answers). */
import type { PausedGuard, RunClaimRepository } from "../run-claims";
import { runLayout } from "./run-names";
import { STATUS_CODES } from "../run-layout";
import { RUN_COLUMNS, type RunRow } from "../run-rows";
import type { SqliteConnection } from "./connection";

const UNFINISHED = `${STATUS_CODES.pending}, ${STATUS_CODES.running}, ${STATUS_CODES.paused}`;
const PAUSED = STATUS_CODES.paused;

export class SqliteRunClaims implements RunClaimRepository {
  constructor(private readonly c: SqliteConnection) {}

  unfinishedHolders() {
    return this.c.do(() => {
      const rows = this.c.db.query<{ owner: string | null }, []>(`SELECT DISTINCT owner FROM runs WHERE status IN (${UNFINISHED})`).all();
      const owners = rows.flatMap((row) => (row.owner === null ? [] : [row.owner]));
      return { owners, unowned: owners.length < rows.length };
    });
  }

  claim(me: string, from: string | null, limit: number, skip: readonly string[] = [], after = "") {
    return this.c.do(() => {
      const held = from === null ? "owner IS NULL" : "owner = ?";
      const skipped = skip.length ? " AND id NOT IN (SELECT value FROM json_each(?))" : "";
      const beyond = after ? " AND id > ?" : "";
      const sql = `UPDATE runs SET owner = ? WHERE id IN (SELECT id FROM runs WHERE status IN (${UNFINISHED}) AND ${held}${skipped}${beyond} ORDER BY id LIMIT ?) RETURNING ${RUN_COLUMNS.join(", ")}`;
      const params: (string | number)[] = [me];
      if (from !== null) params.push(from);
      if (skip.length) params.push(JSON.stringify(skip));
      if (after) params.push(after);
      params.push(limit);
      const layout = runLayout(this.c.db);
      return this.c.db
        .query<RunRow, (string | number)[]>(sql)
        .all(...params)
        .map((row) => layout.decode(row));
    });
  }

  release(runId: string, me: string) {
    return this.c.do(() => void this.c.db.query<null, [string, string]>("UPDATE runs SET owner = NULL WHERE id = ? AND owner = ?").run(runId, me));
  }

  takePaused(runId: string, me: string, guard: PausedGuard) {
    return this.c.do(() => {
      const db = this.c.db;
      if ("tokenHash" in guard) {
        const sql = `UPDATE runs SET owner = ?, resume_token_hash = NULL WHERE id = ? AND status = ${PAUSED} AND resume_token_hash = ?`;
        return db.query<null, [string, string, string]>(sql).run(me, runId, guard.tokenHash).changes > 0;
      }
      if (guard.owner === null)
        return db.query<null, [string, string]>(`UPDATE runs SET owner = ? WHERE id = ? AND status = ${PAUSED} AND owner IS NULL`).run(me, runId).changes > 0;
      return (
        db.query<null, [string, string, string]>(`UPDATE runs SET owner = ? WHERE id = ? AND status = ${PAUSED} AND owner = ?`).run(me, runId, guard.owner)
          .changes > 0
      );
    });
  }

  takeRun(runId: string, me: string, from: string | null) {
    return this.c.do(() => {
      const held = from === null ? "owner IS NULL" : "owner = ?";
      const params = from === null ? [me, runId] : [me, runId, from];
      return this.c.db.query<null, string[]>(`UPDATE runs SET owner = ? WHERE id = ? AND status IN (${UNFINISHED}) AND ${held}`).run(...params).changes > 0;
    });
  }
}
