/** The editor's tree operations: what a user does to the step tree, checked on the definition. */
import { describe, expect, test } from "bun:test";
import {
  NEW_ROUTER,
  earlierSteps,
  insertStep,
  moveStep,
  removeStep,
  renameStep,
  stepForPath,
  stepNames,
  uniqueName,
  walk,
} from "../../public/src/pages/editor/tree";
import type { ActionNode, Definition } from "../../public/src/types";

const piece = (name: string, extra: Partial<ActionNode> = {}): ActionNode => ({
  name,
  type: "PIECE",
  pieceId: "data",
  actionId: "set_fields",
  config: {},
  ...extra,
});

function sample(): Definition {
  return {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "webhook",
      pieceId: "webhook",
      actionId: "catch_webhook",
      config: {},
      nextAction: {
        ...NEW_ROUTER("route"),
        branches: [
          {
            name: "Big",
            conditions: [[{ field: "{{trigger.body.n}}", operator: "number_gt", value: 10 }]],
            firstAction: piece("big", { config: { text: "{{trigger.body.n}}" } }),
          },
          { name: "Otherwise", conditions: [], firstAction: piece("small") },
        ],
        nextAction: piece("reply", { config: { body: "{{ route.output }} and {{big.output.x}}" } }),
      },
    },
  };
}

describe("tree operations", () => {
  test("walk lists every step in execution order, branches before what follows the router", () => {
    expect(stepNames(sample())).toEqual(["trigger", "route", "big", "small", "reply"]);
    expect(walk(sample()).find((v) => v.node.name === "small")!.slot).toEqual({ owner: "route", kind: "branch", branch: 1 });
  });

  test("inserting after the trigger keeps the rest of the chain after the new step", () => {
    const def = insertStep(sample(), { owner: "trigger", kind: "next" }, piece("first"));
    expect(stepNames(def)).toEqual(["trigger", "first", "route", "big", "small", "reply"]);
    expect(def.trigger.nextAction!.nextAction!.name).toBe("route");
  });

  test("inserting into an empty branch and at the head of a branch", () => {
    let def = sample();
    def.trigger.nextAction!.branches![1]!.firstAction = undefined;
    def = insertStep(def, { owner: "route", kind: "branch", branch: 1 }, piece("fallback"));
    expect(def.trigger.nextAction!.branches![1]!.firstAction!.name).toBe("fallback");
    def = insertStep(def, { owner: "route", kind: "branch", branch: 0 }, piece("head"));
    expect(def.trigger.nextAction!.branches![0]!.firstAction!.name).toBe("head");
    expect(def.trigger.nextAction!.branches![0]!.firstAction!.nextAction!.name).toBe("big");
  });

  test("operations never mutate the definition they were given", () => {
    const def = sample();
    const before = JSON.stringify(def);
    insertStep(def, { owner: "trigger", kind: "next" }, piece("x"));
    removeStep(def, "route");
    moveStep(def, "reply", "up");
    expect(JSON.stringify(def)).toBe(before);
  });

  test("deleting a step moves its successors up; the trigger cannot be deleted", () => {
    const def = removeStep(sample(), "route");
    expect(stepNames(def)).toEqual(["trigger", "reply"]);
    expect(() => removeStep(sample(), "trigger")).toThrow("trigger cannot be deleted");
  });

  test("moving a step up swaps it with its predecessor; the first step after the trigger stays", () => {
    let def = insertStep(sample(), { owner: "reply", kind: "next" }, piece("last"));
    def = moveStep(def, "last", "up");
    expect(stepNames(def)).toEqual(["trigger", "route", "big", "small", "last", "reply"]);
    def = moveStep(def, "last", "down");
    expect(stepNames(def).slice(-2)).toEqual(["reply", "last"]);
    expect(moveStep(def, "route", "up")).toBe(def);
  });

  test("renaming a step rewrites expressions that refer to it and refuses duplicates", () => {
    const def = renameStep(sample(), "route", "decide");
    const reply = walk(def).find((v) => v.node.name === "reply")!.node;
    expect(reply.config!.body).toBe("{{ decide.output }} and {{big.output.x}}");
    expect(() => renameStep(sample(), "big", "small")).toThrow("already exists");
  });

  test("unique names follow the action id and never collide", () => {
    const def = sample();
    expect(uniqueName(def, "set_fields")).toBe("set_fields");
    expect(uniqueName(def, "big")).toBe("big_2");
    expect(uniqueName(def, "Send Request!")).toBe("send_request");
    expect(uniqueName(def, "3d")).toBe("step_3d");
  });

  test("a step may refer to the trigger and the steps that surely ran before it", () => {
    const def = sample();
    expect(earlierSteps(def, "big")).toEqual(["trigger", "route"]);
    expect(earlierSteps(def, "reply")).toEqual(["trigger", "route"]);
    expect(earlierSteps(def, "trigger")).toEqual([]);
  });

  test("a diagnostic path points into the step it names", () => {
    const def = sample();
    expect(stepForPath(def, "trigger.nextAction.branches[0].firstAction.config.text")).toBe("big");
    expect(stepForPath(def, "trigger.nextAction.nextAction")).toBe("reply");
    expect(stepForPath(def, "/trigger/nextAction/branches/1/firstAction")).toBe("small");
    expect(stepForPath(def, "definition.trigger.config")).toBe("trigger");
    expect(stepForPath(def, "settings.timeoutSeconds")).toBeUndefined();
  });
});
