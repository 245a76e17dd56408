/**
 * The events of one run for `GET /api/runs/{id}/stream`: first its history from the database (step rows
 * after `Last-Event-ID`, then the run as it stands), then live events until `end`. Every event has an id
 * from one counter per run, so a client that reconnects with Last-Event-ID misses nothing and sees nothing twice.
 */
import type { Engine } from "../../engine/engine";
import type { RunEvent } from "../../engine/run-events";
import { notFound } from "../../http/errors";
import { runFromRow, stepFromRow } from "../../store/run-rows";

const FINISHED = new Set(["completed", "failed", "cancelled"]);

/** Checks the run exists in the workspace (404 otherwise) and returns its event sequence. */
export async function openRunStream(
  engine: Engine,
  workspaceId: string,
  runId: string,
  lastEventId: number,
  clientSignal: AbortSignal,
): Promise<AsyncGenerator<RunEvent>> {
  const signal = AbortSignal.any([clientSignal, engine.closing.signal]);
  const buffered: RunEvent[] = [];
  let wake: (() => void) | undefined;
  // Subscribe before reading the history so that nothing emitted in between is lost.
  const unsubscribe = engine.events.subscribe(runId, (event) => {
    buffered.push(event);
    wake?.();
  });
  const row = await engine.row(workspaceId, runId).catch((error: unknown) => {
    unsubscribe();
    throw error;
  });
  if (!row) {
    unsubscribe();
    throw notFound(`run ${runId}`);
  }
  return (async function* () {
    try {
      let last = lastEventId;
      await engine.committed();
      for (const step of await engine.storedSteps(runId)) {
        if (step.seq <= last) continue;
        last = step.seq;
        yield { type: "step", id: step.seq, step: stepFromRow(step) } as RunEvent;
      }
      const current = (await engine.row(workspaceId, runId)) ?? row;
      if (current.event_seq > last || lastEventId === 0) {
        last = Math.max(last, current.event_seq);
        yield { type: "run", id: current.event_seq, run: engine.withWait(runFromRow(current)) } as RunEvent;
      }
      if (FINISHED.has(current.status)) {
        yield { type: "end", id: current.event_seq + 1, run: runFromRow(current) } as RunEvent;
        return;
      }
      // A cluster: a run another instance holds is followed through the database, woken by that instance's
      // announcements (and once a second, in case one was lost), until it ends or this instance takes it over.
      const links = engine.links;
      if (links && !engine.holds(runId) && links.heldElsewhere(current)) {
        let owner = current.owner;
        let stopFollowing = links.follow(current, () => wake?.());
        try {
          while (!signal.aborted && !engine.holds(runId)) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 1000);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
              signal.addEventListener("abort", () => wake?.(), { once: true });
            });
            wake = undefined;
            for (const step of await engine.storedSteps(runId)) {
              if (step.seq <= last) continue;
              last = step.seq;
              yield { type: "step", id: step.seq, step: stepFromRow(step) } as RunEvent;
            }
            const stored = await engine.storedRow(runId);
            if (!stored) return;
            if (stored.event_seq > last) {
              last = stored.event_seq;
              yield { type: "run", id: stored.event_seq, run: runFromRow(stored) } as RunEvent;
            }
            if (FINISHED.has(stored.status)) {
              yield { type: "end", id: stored.event_seq + 1, run: runFromRow(stored) } as RunEvent;
              return;
            }
            if (stored.owner !== owner && links.heldElsewhere(stored)) {
              // Taken over by another instance: ask the new owner.
              owner = stored.owner;
              stopFollowing();
              stopFollowing = links.follow(stored, () => wake?.());
            }
          }
        } finally {
          stopFollowing();
        }
      }
      while (!signal.aborted) {
        if (buffered.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener("abort", () => resolve(), { once: true });
          });
          wake = undefined;
          continue;
        }
        const event = buffered.shift()!;
        if (event.id <= last && event.type !== "end") continue;
        last = Math.max(last, event.id);
        yield event;
        if (event.type === "end") return;
      }
    } finally {
      unsubscribe();
    }
  })();
}
