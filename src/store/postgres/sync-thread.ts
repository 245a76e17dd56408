/**
 * Worker-thread entry of the synchronous PostgreSQL client (./sync-db.ts): owns one connection and answers
 * each request on the MessagePort it was given, then wakes the waiting caller through the shared counter.
 * A transaction holds the connection from `begin` to `commit`/`rollback`; requests in between run in it.
 */
import { SQL } from "bun";
import type { MessagePort } from "node:worker_threads";
import type { SyncReply, SyncRequest, ThreadStart } from "./sync-db";

declare const self: Worker;

const { url, port, counter } = await new Promise<ThreadStart>((started) => {
  self.onmessage = (event: MessageEvent<ThreadStart>) => started(event.data);
});
self.onmessage = null;
const wake = new Int32Array(counter);
// bigint: int8 values arrive as BigInt (not strings), so they are told apart from text and made numbers below.
// application_name: as ./connection.ts CONNECTION_NAMES.bridge (not imported: the thread loads nothing else).
const sql = new SQL(url, { adapter: "postgres", max: 1, bigint: true, idleTimeout: 0, connection: { application_name: "weft bridge" } });

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
  }
}

/** PostgreSQL's SQLSTATE of an error (Bun's client puts it in `errno`), else the error's own code. */
function sqlstate(error: unknown): string | undefined {
  const e = error as { errno?: string; code?: string } | undefined;
  return e?.errno ?? e?.code;
}

// A web Worker's port: `onmessage`, not node's `on("message")`.
(port as unknown as { onmessage: (event: { data: SyncRequest }) => void }).onmessage = async ({ data: request }) => {
  let reply: SyncReply;
  try {
    reply = await answer(request);
  } catch (error) {
    reply = { error: String((error as Error)?.message ?? error), code: sqlstate(error) };
  }
  port.postMessage(reply);
  Atomics.add(wake, 0, 1);
  Atomics.notify(wake, 0);
};
