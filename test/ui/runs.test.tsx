/** The runs screens: the per-day chart's buckets and the list rendered from GET /api/runs. */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeApi, until, useHappyDom } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(() => {
  fake?.restore();
  document.body.innerHTML = "";
});

const run = (id: string, status: string, startedAt: string, extra: Record<string, unknown> = {}) => ({
  id,
  workflowId: "w1",
  workflowName: "Greeter",
  status,
  triggerType: "webhook",
  environment: "production",
  startedAt,
  durationMs: 12,
  stepTotal: 2,
  stepFailed: status === "failed" ? 1 : 0,
  ...extra,
});

describe("runs", () => {
  test("runs are bucketed per day and status; days without runs stay empty", async () => {
    const { bucketByDay } = await import("../../public/src/pages/runs-chart");
    const now = new Date("2025-03-10T12:00:00Z");
    const buckets = bucketByDay(
      [
        run("a", "completed", "2025-03-10T01:00:00Z"),
        run("b", "failed", "2025-03-10T02:00:00Z"),
        run("c", "completed", "2025-03-08T02:00:00Z"),
        run("d", "completed", "2025-01-01T00:00:00Z"),
      ] as any,
      3,
      now,
    );
    expect(buckets.map((b) => b.day)).toEqual(["2025-03-08", "2025-03-09", "2025-03-10"]);
    expect(buckets.map((b) => b.counts)).toEqual([{ completed: 1 }, {}, { completed: 1, failed: 1 }]);
  });

  test("the list shows each run with its status, and filters go to the API as GET /api/runs names them", async () => {
    const { render, h } = await import("preact");
    const { RunsPage } = await import("../../public/src/pages/runs-page");
    fake = fakeApi({
      "GET /api/workflows": () => ({ body: { data: [], total: 0 } }),
      "GET /api/runs": () => ({
        body: {
          data: [run("r1", "completed", new Date().toISOString()), run("r2", "failed", new Date().toISOString())],
          pagination: { page: 1, limit: 20, total: 2, totalPages: 1 },
        },
      }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(RunsPage, {}), root);
    await until(() => expect(root.querySelectorAll("tr[data-run]").length).toBe(2));
    expect(root.querySelector("tr[data-run=r2]")!.textContent).toContain("1 failed");
    expect(root.querySelector('a[href="#/runs/r1"]')).not.toBeNull();
    const status = [...root.querySelectorAll("label")].find((l) => l.textContent?.startsWith("Status"))!.querySelector("select")!;
    status.value = "failed";
    status.dispatchEvent(new Event("change", { bubbles: true }));
    await until(() =>
      expect(fake!.calls.some((c) => c.path === "/api/runs" && c.query.get("status") === "failed" && c.query.get("environment") === "production")).toBe(true),
    );
    render(null, root);
  });

  test("the chart counts every run the filters match (GET /api/runs/counts, runs not kept included), with a tooltip per day", async () => {
    const { render, h } = await import("preact");
    const { RunsPage } = await import("../../public/src/pages/runs-page");
    const today = new Date().toISOString();
    const day = today.slice(0, 10);
    const days = (counts: Record<string, number>, unsaved: number) => [
      { day: "2000-01-01", counts: {}, unsaved: 0 },
      { day, counts, unsaved },
    ];
    // The API answers by environment, as the server does: test runs only when asked for.
    fake = fakeApi({
      "GET /api/workflows": () => ({ body: { data: [], total: 0 } }),
      "GET /api/runs/counts": (call: any) => {
        const env = call.query.get("environment");
        const data =
          env === "all"
            ? { total: 6, unsaved: 2, days: days({ completed: 5, failed: 1 }, 2) }
            : { total: 3, unsaved: 0, days: days({ completed: 2, failed: 1 }, 0) };
        return { body: { data } };
      },
      "GET /api/runs": (call: any) => {
        const env = call.query.get("environment");
        const prod = [run("p1", "completed", today), run("p2", "completed", today), run("p3", "failed", today)];
        const test = [run("t1", "completed", today, { environment: "test" })];
        const data = env === "test" ? test : env === "all" ? [...prod, ...test] : prod;
        return { body: { data, pagination: { page: 1, limit: 20, total: data.length, totalPages: 1 } } };
      },
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(RunsPage, {}), root);
    const todayBar = () => [...root.querySelectorAll(".chart-day")].at(-1)!;
    await until(() => expect(todayBar().getAttribute("aria-label")).toContain("3 runs (2 completed, 1 failed)"));
    expect(root.querySelectorAll(".chart-day").length).toBe(2);
    expect(root.querySelectorAll("tr[data-run]").length).toBe(3);
    const chartCalls = fake!.calls.filter((c) => c.path === "/api/runs/counts");
    expect(chartCalls.length).toBeGreaterThan(0);
    expect(chartCalls.every((c) => c.query.get("environment") === "production" && c.query.get("days") === "14")).toBe(true);

    const environment = [...root.querySelectorAll("label")].find((l) => l.textContent?.startsWith("Environment"))!.querySelector("select")!;
    environment.value = "all";
    environment.dispatchEvent(new Event("change", { bubbles: true }));
    await until(() => expect(todayBar().getAttribute("aria-label")).toContain("6 runs (5 completed, 1 failed)"));
    await until(() => expect(root.querySelector("figcaption")!.textContent).toContain("2 of 6 runs counted without being kept"));
    await until(() => expect(root.querySelectorAll("tr[data-run]").length).toBe(4));

    todayBar().dispatchEvent(new Event("mouseenter", { bubbles: false }));
    await until(() => expect(root.querySelector('[role="tooltip"]')?.textContent).toContain("6 runs (5 completed, 1 failed)"));
    render(null, root);
  });

  test("with one workflow chosen, the list says what that workflow keeps of its runs (settings.saveRuns)", async () => {
    const { render, h } = await import("preact");
    const { RunsPage } = await import("../../public/src/pages/runs-page");
    fake = fakeApi({
      "GET /api/workflows": () => ({ body: { data: [{ id: "w1", name: "Greeter" }], total: 1 } }),
      "GET /api/workflows/w1": () => ({ body: { data: { id: "w1", name: "Greeter", definition: { settings: { saveRuns: "none" } } } } }),
      "GET /api/runs/counts": () => ({ body: { data: { total: 0, unsaved: 0, days: [] } } }),
      "GET /api/runs": () => ({ body: { data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0 } } }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(RunsPage, {}), root);
    const workflow = [...root.querySelectorAll("label")].find((l) => l.textContent?.startsWith("Workflow"))!.querySelector("select")!;
    await until(() => expect(workflow.querySelectorAll("option").length).toBe(2));
    expect(root.querySelector("[data-save-runs]")).toBeNull();
    workflow.value = "w1";
    workflow.dispatchEvent(new Event("change", { bubbles: true }));
    await until(() => expect(root.querySelector("[data-save-runs]")?.getAttribute("data-save-runs")).toBe("none"));
    expect(root.querySelector("[data-save-runs]")!.textContent).toContain("counted in the chart but not listed");
    render(null, root);
  });

  test("a successful run kept without its steps (saveRuns failed) says its steps ran and were not kept", async () => {
    const { render, h } = await import("preact");
    const { RunDetailPage } = await import("../../public/src/pages/run-detail-page");
    const finished = { finishedAt: new Date().toISOString(), steps: [] };
    fake = fakeApi({
      "GET /api/runs/r1": () => ({ body: { data: run("r1", "completed", new Date().toISOString(), finished) } }),
      "GET /api/runs/r2": () => ({ body: { data: run("r2", "completed", new Date().toISOString(), { ...finished, stepTotal: 0 }) } }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(RunDetailPage, { id: "r1" }), root);
    await until(() => expect(root.querySelector("[data-steps-not-kept]")?.textContent).toContain("2 steps ran; their inputs and outputs were not kept"));
    render(null, root);
    render(h(RunDetailPage, { id: "r2" }), root);
    await until(() => expect(root.textContent).toContain("No steps recorded yet."));
    expect(root.querySelector("[data-steps-not-kept]")).toBeNull();
    render(null, root);
  });
});
