/**
 * Worker-thread entry of the run reader (./run-reads.ts): reads with a connection of its own to the store and
 * answers each read with its result, so a list page, its total or a long run's steps — and decoding their rows
 * and records — never hold the thread that serves HTTP. On SQLite a connection reading WAL snapshots, its
 * reads synchronous; on PostgreSQL the storage port's reads on a small pool of the thread's own, awaited.
 * A list page leaves as the API's JSON (ReaderMessage): the serving thread sends it on without parsing it.
 */
import { yieldToServingThread } from "../lib/thread-priority";
import { openStoreAt } from "./open";
import { CONNECTION_NAMES, openPool } from "./postgres/connection";
import { postgresStorage } from "./postgres/storage";
import type { ReaderMessage, ReaderReply, ReaderRequest } from "./run-reads";
import { pageOfRuns, type RunListFilter, type RunRow } from "./run-rows";
import { RunStore } from "./sqlite/run-store";
import { failureOf } from "./storage-errors";

declare const self: Worker;

// A read may take a core for tens of milliseconds (a deep page, a count): the serving thread comes first.
yieldToServingThread();

/** Connections a reader thread holds on PostgreSQL: its reads overlap their round trips. */
const READER_POOL = 2;

/** RunStore's reads (SQLite) or the port's (PostgreSQL): the same answers, synchronous or awaited. */
let reads:
  | {
      list(filter: RunListFilter): { rows: RunRow[]; total: number } | Promise<{ rows: RunRow[]; total: number }>;
      stepsBounded(runId: string, max: number): unknown;
    }
  | undefined;

async function answer(request: ReaderRequest): Promise<ReaderMessage> {
  if (!reads) throw new Error("the run reader's store is not open");
  switch (request.t) {
    case "list": {
      const page = pageOfRuns(await reads.list(request.filter));
      return [JSON.stringify({ id: request.id, result: { total: page.total } } satisfies ReaderReply), page.runs];
    }
    case "steps":
      return [JSON.stringify({ id: request.id, result: await reads.stepsBounded(request.runId, request.max) } satisfies ReaderReply)];
  }
}

self.onmessage = async (event: MessageEvent) => {
  const message = JSON.parse(event.data as string) as { t: "init"; address: string; synchronous: "FULL" | "NORMAL" } | ReaderRequest;
  if (message.t === "init") {
    let reply: ReaderReply;
    try {
      reads = /^postgres(?:ql)?:/.test(message.address)
        ? postgresStorage(openPool(message.address, READER_POOL, CONNECTION_NAMES.reader)).runReads
        : new RunStore(openStoreAt(message.address, message.synchronous));
      reply = { id: 0, result: null };
    } catch (error) {
      reply = { id: 0, failure: failureOf(error) };
    }
    self.postMessage([JSON.stringify(reply)] satisfies ReaderMessage);
    return;
  }
  let out: ReaderMessage;
  try {
    out = await answer(message);
  } catch (error) {
    out = [JSON.stringify({ id: message.id, failure: failureOf(error) } satisfies ReaderReply)];
  }
  self.postMessage(out);
};
