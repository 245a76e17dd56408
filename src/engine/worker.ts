/**
 * Worker-thread entry: loads the piece registry once, then runs the steps the engine sends it, many at a
 * time (actions are mostly waiting on I/O). Cancellation is cooperative: the step's AbortSignal fires.
 * Sub-flow calls and webhook replies go back to the engine as messages.
 */
import { workspaceKv } from "../store/kv";
import { storageOf } from "../store/storage";
import { loadRegistry, type PieceRegistry } from "../pieces-runtime/registry";
import { AddressPolicy } from "../net/address-policy";
import { createGuardedFetch, wrapGuardedFetch } from "../net/guarded-fetch";
import type { GuardedFetch, KeyValueStore } from "../pieces-sdk/types";
import type { Db } from "../store/db";
import { openStoreAt } from "../store/open";
import { errorMessage, invokeAction } from "./invoke-action";
import type { SubflowResult } from "./step-context";
import type { FromWorker, StepRequest, ToWorker, WorkerInit } from "./worker-protocol";

declare const self: Worker;

const post = (message: FromWorker) => self.postMessage(JSON.stringify(message));

let registry: PieceRegistry | undefined;
let init: WorkerInit | undefined;
let db: Db | undefined;
/** Pieces reach the network only through the SSRF guard (docs/security.md), built from the allow-list. */
let guardedFetch: GuardedFetch | undefined;
/** The guard's allow-list; the engine sends a new one when an admin changes it (Settings → Network). */
const policy = new AddressPolicy();
const running = new Map<string, AbortController>();
const calls = new Map<number, { resolve: (r: SubflowResult) => void; reject: (e: Error) => void }>();
let nextCallId = 1;

function storeFor(workspaceId: string): KeyValueStore {
  if (!init?.store) throw new Error("the key-value store is not available for an in-memory database");
  db ??= openStoreAt(init.store, init.dbSynchronous);
  return workspaceKv(storageOf(db), workspaceId);
}

async function runStep(request: StepRequest) {
  const controller = new AbortController();
  running.set(request.id, controller);
  try {
    const action = registry?.action(request.pieceId, request.actionId);
    if (!action) {
      post({
        t: "done",
        id: request.id,
        outcome: { kind: "error", message: `piece "${request.pieceId}" has no action "${request.actionId}" in this worker's registry`, effects: { tags: [] } },
      });
      return;
    }
    const outcome = await invokeAction(action, {
      config: request.config,
      auth: request.auth,
      run: request.run,
      signal: controller.signal,
      fetch: wrapGuardedFetch(
        (url, requestInit) => guardedFetch!(url, { ...requestInit, signal: requestInit?.signal ?? controller.signal }),
        () => guardedFetch!,
      ),
      store: () => storeFor(request.run.workspaceId),
      log: (message, fields) => post({ t: "log", id: request.id, message: String(message), fields }),
      resumePayload: request.resumePayload,
      publicUrl: request.publicUrl,
      callWorkflow: (call) =>
        new Promise<SubflowResult>((resolve, reject) => {
          const callId = nextCallId++;
          calls.set(callId, { resolve, reject });
          post({ t: "call", id: request.id, callId, call });
        }),
      onReply: (reply) => post({ t: "reply", id: request.id, reply }),
    });
    post({ t: "done", id: request.id, outcome: sanitize(outcome) });
  } catch (error) {
    post({ t: "done", id: request.id, outcome: { kind: "error", message: errorMessage(error), effects: { tags: [] } } });
  } finally {
    running.delete(request.id);
  }
}

/** An output that JSON cannot carry (a cycle, a BigInt) fails the step instead of the worker. */
function sanitize<T>(outcome: T): T {
  try {
    JSON.stringify(outcome);
    return outcome;
  } catch (error) {
    return { kind: "error", message: `the step's output is not JSON: ${errorMessage(error)}`, effects: { tags: [] } } as T;
  }
}

self.onmessage = (event: MessageEvent) => {
  const message = JSON.parse(event.data as string) as ToWorker;
  switch (message.t) {
    case "init":
      init = message;
      policy.setAllowed(message.allowCidrs ?? []);
      guardedFetch = createGuardedFetch({ policy });
      // Defence in depth: a piece that calls the global fetch instead of ctx.fetch is guarded all the same
      // (the guard captured the real fetch above; nothing else in this thread reaches the network).
      globalThis.fetch = Object.assign(guardedFetch, { preconnect: fetch.preconnect }) as typeof fetch;
      loadRegistry({ piecesDir: message.piecesDir })
        .then((loaded) => {
          registry = loaded;
          const pieces: Record<string, string> = {};
          for (const piece of loaded.list()) pieces[piece.id] = piece.version;
          post({ t: "ready", pieces });
        })
        .catch((error) => post({ t: "init-failed", error: errorMessage(error) }));
      return;
    case "allow-cidrs":
      policy.setAllowed(message.allowCidrs);
      return;
    case "step":
      void runStep(message);
      return;
    case "cancel":
      running.get(message.id)?.abort(new Error("cancelled"));
      return;
    case "call-result": {
      const call = calls.get(message.callId);
      if (!call) return;
      calls.delete(message.callId);
      if (message.ok) call.resolve(message.result);
      else call.reject(new Error(message.error));
      return;
    }
  }
};
