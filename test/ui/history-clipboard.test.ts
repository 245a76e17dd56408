/** The editor's undo history and step clipboard, checked on plain values: what an undo takes back, what a paste inserts. */
import { describe, expect, test } from "bun:test";
import { createHistory, describeEdit, HISTORY_LIMIT } from "../../public/src/pages/editor/history";
import { ClipboardError, decodeSteps, encodeSteps } from "../../public/src/pages/editor/step-clipboard";
import { chainOf, insertStep, NEW_ROUTER, renameStep, stepNames, withFreshNames } from "../../public/src/pages/editor/tree";
import type { ActionNode, Definition } from "../../public/src/types";

const piece = (name: string, config: Record<string, unknown> = {}): ActionNode => ({ name, type: "PIECE", pieceId: "text", actionId: "template", config });

function sample(): Definition {
  return {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "webhook",
      pieceId: "webhook",
      actionId: "catch_webhook",
      config: {},
      nextAction: { ...piece("greet", { template: "Hi {{trigger.body.name}}" }), nextAction: piece("reply", { body: "{{greet.output}}" }) },
    },
  };
}

describe("describeEdit", () => {
  test("a change confined to one text value names its path; anything else is 'other'", () => {
    const a = { x: { template: "Hi" }, n: 1 };
    expect(describeEdit(a, { x: { template: "Hi!" }, n: 1 })).toEqual({ kind: "text", path: "/x/template" });
    expect(describeEdit(a, { x: {}, n: 1 })).toEqual({ kind: "text", path: "/x/template" });
    expect(describeEdit(a, { x: { template: "Hi" }, n: 2 })).toEqual({ kind: "other" });
    expect(describeEdit(a, { x: { template: "Ho" }, n: 2 })).toEqual({ kind: "other" });
    expect(describeEdit(a, JSON.parse(JSON.stringify(a)))).toEqual({ kind: "none" });
    expect(describeEdit({ list: [1] }, { list: [1, 2] })).toEqual({ kind: "other" });
  });
});

describe("history", () => {
  test("undo goes back one edit at a time and redo forward again; a new edit drops what was undone", () => {
    const history = createHistory<string>();
    history.record("a", { kind: "other" });
    history.record("b", { kind: "other" });
    expect(history.undo("c")).toBe("b");
    expect(history.undo("b")).toBe("a");
    expect(history.undo("a")).toBeUndefined();
    expect(history.canRedo()).toBe(true);
    expect(history.redo("a")).toBe("b");
    history.record("b", { kind: "other" });
    expect(history.canRedo()).toBe(false);
    expect(history.redo("x")).toBeUndefined();
  });

  test("typing in one field within a second is one entry; another field, a pause or an undo starts a new one", () => {
    let clock = 0;
    const history = createHistory<string>({ now: () => clock });
    const field = { kind: "text", path: "/trigger/config/template" } as const;
    history.record("", field);
    clock = 400;
    history.record("H", field);
    clock = 900;
    history.record("Hi", field);
    // One undo takes the whole burst back.
    expect(history.undo("Hi!")).toBe("");
    expect(history.canUndo()).toBe(false);

    clock = 5000;
    history.record("", field);
    clock = 5500;
    history.record("a", { kind: "text", path: "/other" });
    clock = 7000;
    history.record("ab", field);
    expect(history.undo("abc")).toBe("ab");
    expect(history.undo("ab")).toBe("a");
    expect(history.undo("a")).toBe("");
  });

  test(`keeps the newest ${HISTORY_LIMIT} entries`, () => {
    const history = createHistory<number>();
    for (let i = 0; i < HISTORY_LIMIT + 20; i++) history.record(i, { kind: "other" });
    let last: number | undefined;
    let count = 0;
    for (let state = history.undo(-1); state !== undefined; state = history.undo(state)) {
      last = state;
      count++;
    }
    expect(count).toBe(HISTORY_LIMIT);
    expect(last).toBe(20);
  });
});

describe("step clipboard", () => {
  test("encodes a readable JSON block and decodes it back, the steps after a copied step left out", () => {
    const def = sample();
    const text = encodeSteps([def.trigger.nextAction!]);
    const parsed = JSON.parse(text);
    expect(parsed).toMatchObject({ weft: "steps", version: 1 });
    expect(parsed.steps.map((s: ActionNode) => s.name)).toEqual(["greet"]);
    expect(parsed.steps[0].nextAction).toBeUndefined();
    expect(decodeSteps(text)).toEqual([piece("greet", { template: "Hi {{trigger.body.name}}" })]);
    expect(text).toContain('\n  "weft": "steps"');
  });

  test("a router is copied with its branches and their steps", () => {
    const router: ActionNode = { ...NEW_ROUTER("route"), branches: [{ name: "A", conditions: [], firstAction: piece("inner") }] };
    expect(decodeSteps(encodeSteps([router]))[0]!.branches![0]!.firstAction!.name).toBe("inner");
  });

  test("text that holds no Weft steps is refused with a message saying why", () => {
    const refusal = (text: string) => {
      try {
        decodeSteps(text);
      } catch (error) {
        expect(error).toBeInstanceOf(ClipboardError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refusal("hello world")).toContain("not JSON");
    expect(refusal('{"nodes": []}')).toContain('{"weft": "steps"');
    expect(refusal('{"weft": "steps", "version": 9, "steps": []}')).toContain("version 9");
    expect(refusal('{"weft": "steps", "version": 1, "steps": []}')).toContain("non-empty");
    expect(refusal('{"weft": "steps", "version": 1, "steps": [{"name": "1x", "type": "PIECE"}]}')).toContain("letters, digits and _");
    expect(refusal('{"weft": "steps", "version": 1, "steps": [{"name": "t", "type": "webhook"}]}')).toContain("a trigger cannot be pasted");
    expect(refusal('{"weft": "steps", "version": 1, "steps": [{"name": "t", "type": "PIECE", "colour": 1}]}')).toContain("unknown keys: colour");
  });

  test("a hand-written chain in nextAction is pasted as its steps in order", () => {
    const text = JSON.stringify({ weft: "steps", version: 1, steps: [{ ...piece("a"), nextAction: piece("b") }] });
    expect(decodeSteps(text).map((s) => s.name)).toEqual(["a", "b"]);
  });
});

describe("pasting renames what would collide", () => {
  test("taken names get the next free number; references inside the pasted steps follow, references outside stay", () => {
    const def = sample();
    const copied = [
      piece("greet", { template: "Hi" }),
      piece("reply", { body: "{{greet.output}} {{ greet.output.x }} for {{trigger.body.name}}" }),
      piece("extra", { x: "{{reply.output}}" }),
    ];
    const { steps, renames } = withFreshNames(def, copied);
    expect(steps.map((s) => s.name)).toEqual(["greet_2", "reply_2", "extra"]);
    expect(steps[1]!.config).toEqual({ body: "{{greet_2.output}} {{ greet_2.output.x }} for {{trigger.body.name}}" });
    expect(steps[2]!.config).toEqual({ x: "{{reply_2.output}}" });
    expect([...renames]).toEqual([
      ["greet", "greet_2"],
      ["reply", "reply_2"],
    ]);
    // The original steps are untouched, and the pasted block goes in as one chain.
    expect(copied[0]!.name).toBe("greet");
    const pasted = insertStep(def, { owner: "greet", kind: "next" }, chainOf(steps)!);
    expect(stepNames(pasted)).toEqual(["trigger", "greet", "greet_2", "reply_2", "extra", "reply"]);
    expect(pasted.trigger.nextAction!.nextAction!.nextAction!.nextAction!.nextAction!.config).toEqual({ body: "{{greet.output}}" });
  });

  test("a copy of greet_2 becomes greet_3, and a name inside another word or after a dot is not a reference", () => {
    const def = sample();
    const withSecond = insertStep(def, { owner: "greet", kind: "next" }, piece("greet_2"));
    const { steps } = withFreshNames(withSecond, [piece("greet_2"), piece("use", { a: "{{greet_2.output}} {{trigger.body.greet_2}} {{greet_2x.y}}" })]);
    expect(steps.map((s) => s.name)).toEqual(["greet_3", "use"]);
    expect(steps[1]!.config).toEqual({ a: "{{greet_3.output}} {{trigger.body.greet_2}} {{greet_2x.y}}" });
  });

  test("a rename rewrites every reference inside one expression", () => {
    const def = insertStep(sample(), { owner: "reply", kind: "next" }, piece("sum", { text: "{{ greet.output & greet.output }} {{trigger.body.greet}}" }));
    const renamed = renameStep(def, "greet", "hello");
    expect(stepNames(renamed)).toEqual(["trigger", "hello", "reply", "sum"]);
    expect(renamed.trigger.nextAction!.nextAction!.nextAction!.config).toEqual({ text: "{{ hello.output & hello.output }} {{trigger.body.greet}}" });
  });

  test("steps nested in a pasted router are renamed too, with references to them", () => {
    const def = sample();
    const router: ActionNode = {
      ...NEW_ROUTER("route"),
      branches: [
        {
          name: "A",
          conditions: [[{ field: "{{trigger.body.n}}", operator: "exists" }]],
          firstAction: { ...piece("greet"), nextAction: piece("shout", { text: "{{greet.output}}" }) },
        },
      ],
    };
    const { steps } = withFreshNames(def, [router]);
    const first = steps[0]!.branches![0]!.firstAction!;
    expect(first.name).toBe("greet_2");
    expect(first.nextAction!.config).toEqual({ text: "{{greet_2.output}}" });
    expect(steps[0]!.branches![0]!.conditions[0]![0]!.field).toBe("{{trigger.body.n}}");
  });
});
