import jsonata from "jsonata";
import { describe, expect, test } from "bun:test";
import { checkExpressionSyntax, evaluateExpression, expressionRoots, findExpressions, resolveValue, resolveValueFast } from "../../src/engine/expressions";

const context = {
  trigger: {
    body: {
      name: "Ada",
      n: 21,
      lines: [
        { sku: "a", qty: 2, price: 3 },
        { sku: "b", qty: 1, price: 4 },
      ],
    },
    headers: {},
    query: {},
  },
  greet: { output: { text: "hello", items: [{ id: 7 }] }, status: "completed", error: null },
  fetch: { output: null, status: "failed", error: { message: "boom" } },
  variables: { apiBase: "https://api.example.com" },
  run: { id: "run-1", environment: "test" },
};

describe("findExpressions", () => {
  test("finds every {{ }} with its trimmed source and position", () => {
    const text = "Hi {{ trigger.body.name }}, you are {{trigger.body.n}}";
    const found = findExpressions(text);
    expect(found.map((f) => f.source)).toEqual(["trigger.body.name", "trigger.body.n"]);
    expect(text.slice(found[0]!.start, found[0]!.start + found[0]!.source.length)).toBe("trigger.body.name");
    expect(text.slice(found[1]!.start, found[1]!.start + found[1]!.source.length)).toBe("trigger.body.n");
  });

  test("braces of object constructors and inside string literals belong to the expression", () => {
    expect(findExpressions('{{ {"a": {"b": 1}} }}').map((f) => f.source)).toEqual(['{"a": {"b": 1}}']);
    expect(findExpressions('x {{ "}}" & a }} y').map((f) => f.source)).toEqual(['"}}" & a']);
  });

  test("text without expressions and an unterminated {{ yield nothing", () => {
    expect(findExpressions("plain text")).toEqual([]);
    expect(findExpressions("broken {{ trigger.body")).toEqual([]);
  });
});

describe("checkExpressionSyntax", () => {
  test("a valid expression has no problem", () => {
    expect(checkExpressionSyntax("trigger.body.n * 2")).toBeNull();
    expect(checkExpressionSyntax('$sum(order.output.lines.price) & "x"')).toBeNull();
  });

  test("a syntax error has a message and the position inside the source", () => {
    const problem = checkExpressionSyntax("a + (b")!;
    expect(problem.message).toContain(")");
    expect(problem.position).toBe(6);
    expect(checkExpressionSyntax("foo bar")!.position).toBe(4);
    expect(checkExpressionSyntax("")!.message).toContain("empty");
  });
});

describe("expressionRoots", () => {
  const cases: Array<[string, string[]]> = [
    ["fetch.output.body", ["fetch"]],
    ["greet.output.items[0].id", ["greet"]],
    ['"hello " & trigger.body.name', ["trigger"]],
    ["$sum(order.output.lines.price)", ["order"]],
    ["items[id = 3].x", ["items"]],
    ["$$.trigger.x", ["trigger"]],
    ["variables.apiBase & run.id", ["variables", "run"]],
    ['{ "k": fetch.x, "l": [a, b] }', ["fetch", "a", "b"]],
    ["eachOrder.item.price * eachOrder.index", ["eachOrder"]],
    ["$now()", []],
  ];
  for (const [source, roots] of cases) {
    test(`${source} → ${roots.join(", ") || "none"}`, () => expect(expressionRoots(source).sort()).toEqual([...roots].sort()));
  }
});

describe("evaluation", () => {
  test("a string that is exactly one expression keeps the value's type", async () => {
    expect(await resolveValue("{{trigger.body.n}}", context)).toBe(21);
    expect(await resolveValue("{{ trigger.body.lines }}", context)).toEqual(context.trigger.body.lines);
    expect(await resolveValue("{{trigger.body.n > 20}}", context)).toBe(true);
  });

  test("otherwise results are interpolated as text", async () => {
    expect(await resolveValue("n={{trigger.body.n * 2}}!", context)).toBe("n=42!");
    expect(await resolveValue("obj {{greet.output.items[0]}}", context)).toBe('obj {"id":7}');
    expect(await resolveValue("missing:{{nothing.here}}.", context)).toBe("missing:.");
  });

  test("JSONata works: functions, concatenation, mapping over arrays", async () => {
    expect(await resolveValue('{{ "hello " & trigger.body.name }}', context)).toBe("hello Ada");
    expect(await resolveValue("{{ $sum(trigger.body.lines.price) }}", context)).toBe(7);
    expect(await resolveValue("{{ trigger.body.lines.sku }}", context)).toEqual(["a", "b"]);
    expect(await resolveValue("{{ fetch.error.message }}", context)).toBe("boom");
  });

  test("objects and arrays in config are resolved deeply", async () => {
    const value = await resolveValue({ a: ["{{run.id}}", { b: "{{variables.apiBase}}/x" }], c: 3 }, context);
    expect(value).toEqual({ a: ["run-1", { b: "https://api.example.com/x" }], c: 3 });
  });

  test("bare paths resolve synchronously (the fast path); JSONata returns a promise", async () => {
    expect(resolveValueFast({ x: "{{ greet.output.text }}" }, context)).toEqual({ x: "hello" });
    const pending = resolveValueFast({ x: "{{ greet.output.text & '!' }}" }, context);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toEqual({ x: "hello!" });
  });

  test("a path and a number (`n * 2`) are computed without JSONata, with JSONata's results and errors", async () => {
    const ctx = { trigger: { body: { n: 21, s: "21", list: [1, 2], zero: 0 } } };
    expect(resolveValueFast({ d: "{{ trigger.body.n * 2 }}", p: "{{trigger.body.n+0.5}}", m: "{{ trigger.body.n % 4 }}" }, ctx)).toEqual({
      d: 42,
      p: 21.5,
      m: 1,
    });
    for (const source of ["trigger.body.n * 2", "trigger.body.n - 30", "trigger.body.n / 4", "trigger.body.missing * 2", "trigger.body.n / 0"]) {
      expect(await evaluateExpression(source, ctx)).toEqual(await jsonata(source).evaluate(ctx));
    }
    // Not a number, or a result JSONata refuses: JSONata decides (and names the problem).
    await expect(evaluateExpression("trigger.body.s * 2", ctx)).rejects.toThrow(/trigger\.body\.s \* 2/);
    await expect(evaluateExpression("trigger.body.list * 2", ctx)).rejects.toThrow(/must evaluate to a number/);
  });

  test("bare paths read own properties only: no prototype escapes", async () => {
    expect(await resolveValue("{{ trigger.constructor }}", context)).toBeUndefined();
    expect(await resolveValue("{{ trigger.body.__proto__ }}", context)).toBeUndefined();
    expect(await resolveValue("{{ $string(trigger.constructor) }}", context)).toBeUndefined();
    expect(await evaluateExpression("greet.output.text.length", context)).toBeUndefined();
  });

  test("a runtime error names the expression and the reason", async () => {
    await expect(resolveValue("{{ $number('x') + 1 }}", context)).rejects.toThrow("{{$number('x') + 1}}");
    await expect(resolveValue("{{ a + }}", context)).rejects.toThrow(/expression \{\{a \+\}\} failed/);
  });
});
