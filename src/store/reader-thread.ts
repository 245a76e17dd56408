/**
 * Worker-thread entry of the run reader on SQLite (./run-reads.ts): owns a connection of its own to the store,
 * reading WAL snapshots, and answers each read with its result, so a list page, its total or a long run's steps
 * never hold the thread that serves HTTP. (PostgreSQL's reads are the storage port's, awaited: no thread.)
 */
import { openStoreAt } from "./open";
import type { ReaderReply, ReaderRequest } from "./run-reads";
import { RunStore } from "./runs";
import { failureOf } from "./storage-errors";

declare const self: Worker;

let store: RunStore | undefined;

function answer(request: ReaderRequest): unknown {
  if (!store) throw new Error("the run reader's store is not open");
  switch (request.t) {
    case "list":
      return store.list(request.filter);
    case "steps":
      return store.stepsBounded(request.runId, request.max);
  }
}

self.onmessage = (event: MessageEvent) => {
  const message = JSON.parse(event.data as string) as { t: "init"; address: string; synchronous: "FULL" | "NORMAL" } | ReaderRequest;
  if (message.t === "init") {
    let reply: ReaderReply;
    try {
      store = new RunStore(openStoreAt(message.address, message.synchronous));
      reply = { id: 0, result: null };
    } catch (error) {
      reply = { id: 0, failure: failureOf(error) };
    }
    self.postMessage(JSON.stringify(reply));
    return;
  }
  let reply: ReaderReply;
  try {
    reply = { id: message.id, result: answer(message) };
  } catch (error) {
    reply = { id: message.id, failure: failureOf(error) };
  }
  self.postMessage(JSON.stringify(reply));
};
