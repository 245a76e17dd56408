/**
 * Schedules on a fake clock: fire on the instant and only then, skip after unpublish, exactly one run
 * per instant across republish and restart, missed instants coalesced at start-up.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { FakeClock } from "../../src/lib/clock";
import { definition, triggerApp, type TriggerApp } from "./harness";

const cron = (expression: string, timezone = "UTC") => ({
  name: "trigger",
  displayName: "Schedule",
  type: "cron",
  pieceId: "schedule",
  actionId: "cron",
  config: { expression, timezone },
});
const every = (interval: number, unit = "minutes") => ({
  name: "trigger",
  displayName: "Every",
  type: "cron",
  pieceId: "schedule",
  actionId: "every",
  config: { interval, unit },
});
const step = { name: "note", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { at: "{{trigger.scheduledAt}}" } } };

let open: TriggerApp[] = [];
afterEach(async () => {
  for (const app of open) await app.close().catch(() => undefined);
  open = [];
});

async function app(clock = new FakeClock("2025-01-06T08:59:30.000Z"), dataDir?: string) {
  const h = await triggerApp({ clock, dataDir });
  open.push(h);
  return h;
}

async function cronRuns(h: TriggerApp, workflowId: string) {
  return (await h.runsOf(workflowId)).filter((r) => r.triggerType === "cron");
}

describe("schedules", () => {
  test("a cron trigger fires once at its instant, in its time zone, and not before", async () => {
    const h = await app();
    // 10:00 in Berlin is 09:00 UTC in January.
    const wf = await h.publishWorkflow(definition(cron("0 10 * * *", "Europe/Berlin"), step));
    const status = await h.req("GET", `/api/workflows/${wf.id}/trigger`);
    expect(status.body.data.schedule.nextFireAt).toBe("2025-01-06T09:00:00.000Z");

    h.clock.set("2025-01-06T08:59:59.999Z");
    expect(await h.triggers.scheduler.tick()).toEqual([]);
    h.clock.set("2025-01-06T09:00:00.200Z");
    const fired = await h.triggers.scheduler.tick();
    expect(fired.map((f) => f.scheduledAt)).toEqual(["2025-01-06T09:00:00.000Z"]);
    expect(await h.triggers.scheduler.tick()).toEqual([]);

    const run = await h.run(fired[0]!.runId);
    expect(run.status).toBe("completed");
    expect(run.triggerType).toBe("cron");
    expect(run.environment).toBe("production");
    expect(run.triggerData).toMatchObject({ scheduledAt: "2025-01-06T09:00:00.000Z", expression: "0 10 * * *", timezone: "Europe/Berlin" });
    expect((await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.schedule).toMatchObject({
      nextFireAt: "2025-01-07T09:00:00.000Z",
      lastRunId: run.id,
    });
  });

  test("unpublish skips the schedule at once; republish resumes from the next instant", async () => {
    const h = await app();
    const wf = await h.publishWorkflow(definition(cron("*/5 * * * *"), step));
    h.clock.set("2025-01-06T09:00:00.000Z");
    expect(await h.triggers.scheduler.tick()).toHaveLength(1);
    expect((await h.req("POST", `/api/workflows/${wf.id}/unpublish`)).status).toBe(200);
    h.clock.set("2025-01-06T09:20:00.000Z");
    expect(await h.triggers.scheduler.tick()).toEqual([]);
    expect((await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.schedule).toBeNull();
    expect((await h.publish(wf.id)).status).toBe(200);
    expect(await h.triggers.scheduler.tick()).toEqual([]);
    h.clock.set("2025-01-06T09:25:00.000Z");
    expect((await h.triggers.scheduler.tick()).map((f) => f.scheduledAt)).toEqual(["2025-01-06T09:25:00.000Z"]);
    expect(await cronRuns(h, wf.id)).toHaveLength(2);
  });

  test("republishing an unchanged schedule keeps the stored instant: no second run for the same instant", async () => {
    const h = await app();
    const wf = await h.publishWorkflow(definition(cron("0 * * * *"), step));
    h.clock.set("2025-01-06T09:00:00.300Z");
    expect(await h.triggers.scheduler.tick()).toHaveLength(1);
    // A republish (here after an edit elsewhere in the tree) within the same second.
    const edited = definition(cron("0 * * * *"), { ...step, config: { fields: { at: "{{trigger.scheduledAt}}", v: 2 } } });
    expect((await h.req("PUT", `/api/workflows/${wf.id}`, { body: { name: "wf", definition: edited } })).status).toBe(200);
    expect((await h.publish(wf.id)).status).toBe(200);
    expect(await h.triggers.scheduler.tick()).toEqual([]);
    expect((await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.schedule.nextFireAt).toBe("2025-01-06T10:00:00.000Z");
    // A changed schedule starts from its own next instant.
    expect((await h.req("PUT", `/api/workflows/${wf.id}`, { body: { name: "wf", definition: definition(cron("30 9 * * *"), step) } })).status).toBe(200);
    expect((await h.publish(wf.id)).status).toBe(200);
    expect((await h.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.schedule.nextFireAt).toBe("2025-01-06T09:30:00.000Z");
  });

  test("no double fire across a restart; instants missed while down fire once at start-up", async () => {
    const clock = new FakeClock("2025-01-06T08:59:30.000Z");
    const first = await app(clock);
    const wf = await first.publishWorkflow(definition(cron("0 * * * *"), step));
    clock.set("2025-01-06T09:00:00.100Z");
    expect(await first.triggers.scheduler.tick()).toHaveLength(1);

    // Restart within the same second: the instant already fired and is not fired again.
    const second = await first.restart();
    open.push(second);
    await second.triggers.reconcile();
    expect(await second.triggers.scheduler.tick()).toEqual([]);

    // Down from 09:30 to 12:10: 10:00, 11:00 and 12:00 were missed; one run, then on to 13:00.
    clock.set("2025-01-06T12:10:00.000Z");
    const third = await second.restart();
    open.push(third);
    await third.triggers.reconcile();
    const fired = await third.triggers.scheduler.tick();
    expect(fired.map((f) => f.scheduledAt)).toEqual(["2025-01-06T10:00:00.000Z"]);
    expect(await third.triggers.scheduler.tick()).toEqual([]);
    expect((await third.req("GET", `/api/workflows/${wf.id}/trigger`)).body.data.schedule.nextFireAt).toBe("2025-01-06T13:00:00.000Z");
    expect(await cronRuns(third, wf.id)).toHaveLength(2);
  });

  test("schedule.every fires every interval from the previous instant", async () => {
    const h = await app(new FakeClock("2025-01-06T09:00:00.000Z"));
    const wf = await h.publishWorkflow(definition(every(5), step));
    const times: string[] = [];
    for (let minute = 1; minute <= 16; minute++) {
      h.clock.advance(60_000);
      times.push(...(await h.triggers.scheduler.tick()).map((f) => f.scheduledAt));
    }
    expect(times).toEqual(["2025-01-06T09:05:00.000Z", "2025-01-06T09:10:00.000Z", "2025-01-06T09:15:00.000Z"]);
    const run = (await cronRuns(h, wf.id))[0];
    expect(run.triggerData.everySeconds).toBe(300);
  });

  test("a schedule more frequent than the minimum interval is refused at publish and never fires", async () => {
    const h = await app();
    const wf = await h.createWorkflow("too-often", definition(cron("*/10 * * * * *"), step));
    const res = await h.publish(wf.id);
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("minimum of 60 s");
    h.clock.advance(3_600_000);
    expect(await h.triggers.scheduler.tick()).toEqual([]);
  });

  test("a deleted live workflow stops firing", async () => {
    const h = await app();
    const wf = await h.publishWorkflow(definition(cron("0 * * * *"), step));
    expect((await h.req("DELETE", `/api/workflows/${wf.id}`)).status).toBe(200);
    h.clock.set("2025-01-06T09:00:00.000Z");
    expect(await h.triggers.scheduler.tick()).toEqual([]);
  });
});
