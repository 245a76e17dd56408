/**
 * A cluster takes over a dead instance's runs: three `weft serve` processes on one PostgreSQL database take
 * 3,000 webhook calls between them; one is SIGKILLed half-way. Every accepted call's run ends exactly once
 * (each run is listed once, finished), no side effect of a run happens twice (each step calls a local HTTP
 * sink under a path of its own), a run that failed says why, and the survivors finish the dead instance's runs
 * within the lease plus 10 s of the last accepted call.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { allRuns, clusterEnv, effectSink, publishSinkChain, startInstance } from "../support/cluster";
import { announceMissingPostgres, postgresBinaries } from "../support/postgres";
import { networkPostgresDatabase } from "../support/postgres-storage";
import type { ServerHandle } from "../support/server";

announceMissingPostgres();

const CALLS = 3_000;
const IN_FLIGHT = 24;
const LEASE_SECONDS = 3;
const FINISHED = new Set(["completed", "failed", "cancelled"]);

let sink: ReturnType<typeof effectSink>;
const servers: ServerHandle[] = [];

beforeAll(() => {
  sink = effectSink(5); // a side effect takes a moment: the kill lands inside steps too
});
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL").catch(() => undefined);
  sink.stop();
});

describe.skipIf(!postgresBinaries())("a cluster of three on one PostgreSQL database", () => {
  test("one SIGKILLed half-way through 3,000 webhook calls: every accepted run ends once, no side effect twice, the survivors finish in time", async () => {
    const { url } = await networkPostgresDatabase();
    const env = clusterEnv(url, { WEFT_LEASE_SECONDS: String(LEASE_SECONDS) });
    const first = await startInstance(servers, env);
    await startInstance(servers, env);
    await startInstance(servers, env);
    const token = await publishSinkChain(first, sink.port, ["a", "b"]);
    const hits = sink.hits;

    const victim = servers[2]!;
    const alive = new Set(servers);
    const accepted = new Map<string, string>(); // run id → tag
    // Calls the victim died with open: their run may have been stored before it could answer (then it must
    // run once, like any other), or not at all.
    const cutOff = new Set<string>();
    let sent = 0;
    let killedAt = 0;
    let lastAcceptedAt = 0;
    const sender = async () => {
      for (;;) {
        const n = sent++;
        if (n >= CALLS) return;
        if (n === CALLS / 2) {
          killedAt = Date.now();
          await victim.stop("SIGKILL");
          alive.delete(victim);
        }
        const targets = [...alive];
        const target = targets[n % targets.length]!;
        const tag = `call-${n}`;
        try {
          const res = await fetch(`${target.url}/webhook/${token}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ tag }),
          });
          if (res.status === 202) {
            accepted.set(((await res.json()) as any).data.runId, tag);
            lastAcceptedAt = Date.now();
          } else await res.body?.cancel();
        } catch {
          // The victim died with this call open: not accepted.
          cutOff.add(tag);
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    expect(accepted.size).toBeGreaterThan(CALLS * 0.95);

    // Every accepted run ends, within the lease + 10 s of the kill or of the last accepted call.
    const survivor = servers[0]!;
    const deadline = Math.max(killedAt + LEASE_SECONDS * 1000, lastAcceptedAt) + 10_000;
    let runs: any[] = [];
    for (;;) {
      runs = await allRuns(survivor);
      const listed = new Set(runs.map((run) => run.id));
      if ([...accepted.keys()].every((id) => listed.has(id)) && runs.every((run) => FINISHED.has(run.status))) break;
      if (Date.now() > deadline) break;
      await Bun.sleep(250);
    }
    const unfinished = runs.filter((run) => !FINISHED.has(run.status));
    expect(unfinished.map((run) => `${run.id} ${run.status}`)).toEqual([]);
    expect(Date.now()).toBeLessThanOrEqual(deadline + 1_000);

    // Each accepted run is listed once; any other run is that of a call the victim died with.
    const ids = runs.map((run) => run.id);
    expect(new Set(ids).size).toBe(ids.length);
    const tagOf = new Map(runs.map((run) => [run.id, accepted.get(run.id) ?? String(run.triggerData?.body?.tag)]));
    const others = runs.filter((run) => !accepted.has(run.id));
    expect(others.map((run) => tagOf.get(run.id)).filter((tag) => !cutOff.has(tag!))).toEqual([]);
    expect(ids.filter((id) => accepted.has(id)).sort()).toEqual([...accepted.keys()].sort());

    // No side effect twice; a completed run did both; a failed run says why.
    const twice = [...hits].filter(([, n]) => n > 1).map(([path]) => path);
    expect(twice).toEqual([]);
    const failed = runs.filter((run) => run.status === "failed");
    for (const run of failed) expect(run.errorMessage).toBeTruthy();
    for (const run of runs.filter((r) => r.status === "completed")) {
      const tag = tagOf.get(run.id)!;
      expect([hits.get(`/${tag}/a`), hits.get(`/${tag}/b`)]).toEqual([1, 1]);
    }
    console.log(
      `cluster takeover: ${accepted.size} accepted of ${CALLS}, ${others.length} stored of ${cutOff.size} cut off, ${runs.filter((r) => r.status === "completed").length} completed, ${failed.length} failed (interrupted), all finished ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
  }, 120_000);
});
