/**
 * Statements committed as one transaction on a connection of one's own (`max: 1`): the run writer's lanes
 * (./run-batches.ts) and the first batches on a reserved connection of the port's pool (./writer.ts).
 */
import type { SQL } from "bun";

export interface Statement {
  text: string;
  params: unknown[];
}

/**
 * One statement (the usual batch: one segment) is sent alone and is its own transaction: one round trip.
 * Several are sent between BEGIN and COMMIT without waiting for answers in between (the client pipelines
 * statements with parameters; BEGIN and COMMIT each wait for what is before them); after an error
 * PostgreSQL ignores the rest and COMMIT rolls back.
 */
export async function commitStatements(sql: SQL, statements: Statement[]): Promise<void> {
  if (statements.length === 1) {
    await sql.unsafe(statements[0]!.text, statements[0]!.params);
    return;
  }
  const sent = [sql.unsafe("BEGIN"), ...statements.map((s) => sql.unsafe(s.text, s.params)), sql.unsafe("COMMIT")];
  const results = await Promise.allSettled(sent);
  // The first error is the cause; the ones after it say the transaction was aborted.
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  const end = results.at(-1) as PromiseFulfilledResult<{ command?: string }>;
  if (end.value.command !== "COMMIT") throw new Error(`the transaction ended with ${end.value.command ?? "no answer"} instead of COMMIT`);
}
