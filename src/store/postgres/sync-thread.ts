/**
 * Worker-thread entry of the synchronous PostgreSQL client (./sync-db.ts): owns one connection and answers
 * each request on the MessagePort it was given, then wakes the waiting caller through the shared counter.
 * A transaction holds the connection from `begin` to `commit`/`rollback`; requests in between run in it.
 */
import { SQL } from "bun";
import { workerData, type MessagePort } from "node:worker_threads";
import type { BatchReply, SyncReply, SyncRequest } from "./sync-db";

const { url, port, counter } = workerData as { url: string; port: MessagePort; counter: SharedArrayBuffer };
const wake = new Int32Array(counter);
// bigint: int8 values arrive as BigInt (not strings), so they are told apart from text and made numbers below.
const sql = new SQL(url, { adapter: "postgres", max: 1, bigint: true, idleTimeout: 0 });

let tx: SQL | undefined;
let finish: ((commit: boolean) => void) | undefined;
let finished: Promise<unknown> | undefined;
const ROLLBACK = Symbol("rollback");

/** Every number Weft stores fits a double; BigInt would not survive a JSON.stringify. */
function plain(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  for (const row of rows) for (const key in row) if (typeof row[key] === "bigint") row[key] = Number(row[key]);
  return rows;
}

async function answer(request: SyncRequest): Promise<SyncReply> {
  switch (request.op) {
    case "query": {
      const client = tx ?? sql;
      const result = request.params === undefined ? await client.unsafe(request.text) : await client.unsafe(request.text, request.params);
      return { rows: plain([...result]), count: result.count ?? 0 };
    }
    case "begin":
      if (tx) throw new Error("a transaction is already open on this connection");
      await new Promise<void>((opened) => {
        finished = sql
          .begin(async (inner) => {
            tx = inner;
            opened();
            const commit = await new Promise<boolean>((resolve) => {
              finish = resolve;
            });
            if (!commit) throw ROLLBACK;
          })
          .catch((error) => {
            if (error !== ROLLBACK) throw error;
          });
        // A BEGIN that fails never calls the callback: settle the wait with the error.
        finished.catch(() => opened());
      });
      if (!tx) await finished;
      return { rows: [], count: 0 };
    case "commit":
    case "rollback": {
      if (!finish || !finished) throw new Error(`no transaction is open to ${request.op}`);
      const done = finished;
      finish(request.op === "commit");
      tx = undefined;
      finish = undefined;
      finished = undefined;
      await done;
      return { rows: [], count: 0 };
    }
    case "close":
      await sql.close();
      return { rows: [], count: 0 };
    case "attach":
    case "statements":
      throw new Error(`${request.op} is not answered synchronously`);
  }
}

/** Where `statements` requests are answered (sync-db.ts applyStatements). */
let batchPort: MessagePort | undefined;

/** Statements in one transaction: alone, one statement is its own. */
async function apply(statements: Array<{ text: string; params: unknown[] }>): Promise<void> {
  if (statements.length === 1) {
    await sql.unsafe(statements[0]!.text, statements[0]!.params);
    return;
  }
  await sql.begin(async (inner) => {
    for (const statement of statements) await inner.unsafe(statement.text, statement.params);
  });
}

port.on("message", async (request: SyncRequest) => {
  if (request.op === "attach") {
    batchPort = request.port;
    return;
  }
  if (request.op === "statements") {
    let error: string | undefined;
    try {
      await apply(request.statements);
    } catch (e) {
      error = String((e as Error)?.message ?? e);
    }
    batchPort?.postMessage({ id: request.id, error } satisfies BatchReply);
    return;
  }
  let reply: SyncReply;
  try {
    reply = await answer(request);
  } catch (error) {
    const e = error as { message?: string; errno?: string; code?: string };
    reply = { error: String(e?.message ?? error), code: e?.errno ?? e?.code };
  }
  port.postMessage(reply);
  Atomics.add(wake, 0, 1);
  Atomics.notify(wake, 0);
});
