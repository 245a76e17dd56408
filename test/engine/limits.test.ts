/**
 * Limits instead of collapse: a loop over too many items, a run of too many steps and a step whose output
 * is too large each fail the run with a message naming the limit, its value and the variable that raises
 * it; within the limits the same workflows run as before. Run detail of a run with thousands of steps
 * shows the first and last ones and says how many are left out.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { runUserCode } from "../../src/sandbox";
import { createWorkflow, definition, engineApp, runAndWait, set, stepOf, stopEngines } from "./support";

afterAll(stopEngines);

const loop = (items: string, body: Record<string, unknown>) => ({ name: "each", type: "LOOP_ON_ITEMS", config: { items }, firstLoopAction: body });

describe("limits", () => {
  test("a loop over more items than WEFT_LOOP_MAX_ITEMS fails before it iterates; at the limit it runs", async () => {
    const t = await engineApp({ WEFT_LOOP_MAX_ITEMS: "5" });
    const id = await createWorkflow(t, definition(loop("{{trigger.body.items}}", set("touch", { n: "{{each.item}}" }))));
    const over = await runAndWait(t, id, { items: [1, 2, 3, 4, 5, 6] });
    expect(over.status).toBe("failed");
    expect(over.errorMessage).toContain("6 items");
    expect(over.errorMessage).toContain("at most 5");
    expect(over.errorMessage).toContain("WEFT_LOOP_MAX_ITEMS");
    expect(over.steps.filter((s: any) => s.nodeId === "touch")).toHaveLength(0);
    const at = await runAndWait(t, id, { items: [1, 2, 3, 4, 5] });
    expect(at.status).toBe("completed");
    expect(at.steps.filter((s: any) => s.nodeId === "touch")).toHaveLength(5);
  });

  test("a run that would execute more than WEFT_RUN_MAX_STEPS steps fails at the next one", async () => {
    const t = await engineApp({ WEFT_RUN_MAX_STEPS: "10" });
    const id = await createWorkflow(t, definition(loop("{{trigger.body.items}}", set("touch", { n: "{{each.item}}" }))));
    const over = await runAndWait(t, id, { items: Array.from({ length: 20 }, (_, i) => i) });
    expect(over.status).toBe("failed");
    expect(over.errorMessage).toContain("limit of 10 executed steps");
    expect(over.errorMessage).toContain("WEFT_RUN_MAX_STEPS");
    expect(over.stepTotal).toBe(10);
    const within = await runAndWait(t, id, { items: [1, 2, 3] });
    expect(within.status).toBe("completed");
  });

  test("a step whose output is larger than WEFT_STEP_MAX_OUTPUT_MB fails, naming size and limit; a smaller one is stored unchanged", async () => {
    const t = await engineApp({ WEFT_STEP_MAX_OUTPUT_MB: "1" });
    // JSONata's $pad builds the text in the step itself: no request body limit is involved.
    const big = await createWorkflow(
      t,
      definition(set("make", { text: '{{ $pad("", trigger.body.size, "x") }}' }, { nextAction: set("after", { ok: true }) })),
    );
    const over = await runAndWait(t, big, { size: 1_500_000 });
    expect(over.status).toBe("failed");
    expect(stepOf(over, "make").status).toBe("failed");
    expect(over.errorMessage).toContain('output of step "make" is 1.4 MB');
    expect(over.errorMessage).toContain("limit is 1 MB");
    expect(over.errorMessage).toContain("WEFT_STEP_MAX_OUTPUT_MB");
    expect(stepOf(over, "after")).toBeUndefined();
    const small = await runAndWait(t, big, { size: 1000 });
    expect(small.status).toBe("completed");
    expect(stepOf(small, "make").outputData).toEqual({ text: "x".repeat(1000) });
  });

  test("code whose result is over the step output limit is refused inside the sandbox, naming the limit", async () => {
    const result = await runUserCode({ code: "return 'y'.repeat(11 * 1024 * 1024)", isolation: "inline", timeoutMs: 5_000 });
    expect(result).toMatchObject({ ok: false, reason: "output" });
    expect((result as { error: string }).error).toContain("11.0 MB of JSON");
    expect((result as { error: string }).error).toContain("WEFT_STEP_MAX_OUTPUT_MB");
  });

  test("run detail of a run with more than 2,000 steps shows the first and last 1,000 and how many are left out", async () => {
    const t = await engineApp();
    const id = await createWorkflow(t, definition(loop("{{trigger.body.items}}", set("touch", { n: "{{each.item}}" }))));
    const done = await runAndWait(t, id, { items: Array.from({ length: 2_500 }, (_, i) => i) }, "test", 30);
    expect(done.status).toBe("completed");
    const detail = (await t.req("GET", `/api/runs/${done.id}`)).body.data;
    expect(detail.stepTotal).toBe(2_501);
    expect(detail.steps).toHaveLength(2_000);
    expect(detail.stepsOmitted).toBe(501);
    expect(detail.steps[0].outputData).toEqual({ n: 0 });
    expect(detail.steps[999].outputData).toEqual({ n: 999 });
    expect(detail.steps[1000].outputData).toEqual({ n: 1_501 }); // rows 1,501–2,500: iterations 1,501–2,499 and the loop
    expect(detail.steps.at(-1).nodeId).toBe("each");
  }, 60_000);
});
