/**
 * A router's branches: each has a name and conditions (OR over groups, AND inside a group); a
 * branch with no conditions is the fallback. Branches are tried in order (docs/engine.md "Expressions and conditions").
 */
import { CONDITION_OPERATORS, UNARY_OPERATORS } from "../../../../src/schema/operators";
import type { Branch, Condition } from "../../types";
import { type DataPath, ExpressionInput } from "./expression-input";

export const OPERATORS: readonly string[] = CONDITION_OPERATORS;
const UNARY = new Set<string>(UNARY_OPERATORS);
const LABELS: Record<string, string> = {
  text_eq: "text equals",
  text_neq: "text differs from",
  text_contains: "text contains",
  text_not_contains: "text does not contain",
  text_starts_with: "text starts with",
  text_ends_with: "text ends with",
  text_regex: "text matches regex",
  number_eq: "number =",
  number_neq: "number ≠",
  number_gt: "number >",
  number_gte: "number ≥",
  number_lt: "number <",
  number_lte: "number ≤",
  boolean_true: "is true",
  boolean_false: "is false",
  exists: "exists",
  not_exists: "does not exist",
  list_contains: "list contains",
  list_empty: "list is empty",
  list_not_empty: "list is not empty",
  date_before: "date before",
  date_after: "date after",
};

const blank = (): Condition => ({ field: "", operator: "text_eq", value: "" });

export function RouterEditor({
  branches,
  onChange,
  paths,
  stepName,
}: {
  branches: Branch[];
  onChange(branches: Branch[]): void;
  paths: DataPath[];
  stepName: string;
}) {
  const update = (index: number, patch: (branch: Branch) => Branch) => onChange(branches.map((b, i) => (i === index ? patch(structuredCloneSafe(b)) : b)));
  return (
    <div class="router-editor">
      {branches.map((branch, bi) => {
        const prefix = `${stepName}-b${bi}`;
        return (
          <fieldset class="branch-editor" key={bi}>
            <legend>
              Branch {bi + 1}
              {branch.conditions.length === 0 ? " — fallback" : ""}
            </legend>
            <div class="field">
              <label for={`${prefix}-name`}>Branch name</label>
              <input
                id={`${prefix}-name`}
                value={branch.name}
                onChange={(e) => update(bi, (b) => ({ ...b, name: (e.target as HTMLInputElement).value || b.name }))}
              />
            </div>
            {branch.conditions.map((group, gi) => (
              <div class="condition-group" role="group" aria-label={`Branch ${branch.name}, condition group ${gi + 1}`} key={gi}>
                {gi > 0 && <div class="or">or</div>}
                {group.map((condition, ci) => {
                  const id = `${prefix}-g${gi}-c${ci}`;
                  const setCondition = (next: Condition) =>
                    update(bi, (b) => {
                      b.conditions[gi][ci] = next;
                      return b;
                    });
                  return (
                    <div class="condition" key={ci}>
                      {ci > 0 && <span class="and">and</span>}
                      <label class="sr-only" for={`${id}-field`}>
                        Value to test
                      </label>
                      <ExpressionInput
                        id={`${id}-field`}
                        label={`${branch.name} condition ${ci + 1}`}
                        placeholder="{{trigger.body.x}}"
                        value={String(condition.field ?? "")}
                        paths={paths}
                        onCommit={(field) => setCondition({ ...condition, field })}
                      />
                      {paths.length > 0 && (
                        <select
                          aria-label={`Insert data into condition ${ci + 1}`}
                          value=""
                          onChange={(e) => {
                            const v = (e.target as HTMLSelectElement).value;
                            if (v) setCondition({ ...condition, field: `{{${v}}}` });
                          }}
                        >
                          <option value="">Data…</option>
                          {paths.map((p) => (
                            <option key={p.expression} value={p.expression}>
                              {p.label}
                            </option>
                          ))}
                        </select>
                      )}
                      <label class="sr-only" for={`${id}-op`}>
                        Operator
                      </label>
                      <select
                        id={`${id}-op`}
                        value={condition.operator}
                        onChange={(e) => {
                          const operator = (e.target as HTMLSelectElement).value;
                          const next: Condition = { field: condition.field, operator };
                          if (!UNARY.has(operator)) next.value = condition.value ?? "";
                          setCondition(next);
                        }}
                      >
                        {OPERATORS.map((op) => (
                          <option key={op} value={op}>
                            {LABELS[op] ?? op}
                          </option>
                        ))}
                      </select>
                      {!UNARY.has(condition.operator) && (
                        <>
                          <label class="sr-only" for={`${id}-value`}>
                            Compare with
                          </label>
                          <input
                            id={`${id}-value`}
                            value={condition.value === undefined ? "" : String(condition.value)}
                            onChange={(e) => {
                              const raw = (e.target as HTMLInputElement).value;
                              setCondition({
                                ...condition,
                                value: condition.operator.startsWith("number_") && raw.trim() !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw,
                              });
                            }}
                          />
                        </>
                      )}
                      <button
                        type="button"
                        class="link"
                        aria-label={`Remove condition ${ci + 1} of group ${gi + 1}`}
                        onClick={() =>
                          update(bi, (b) => {
                            b.conditions[gi].splice(ci, 1);
                            if (b.conditions[gi].length === 0) b.conditions.splice(gi, 1);
                            return b;
                          })
                        }
                      >
                        ×
                      </button>
                    </div>
                  );
                })}
                <button
                  type="button"
                  class="small"
                  onClick={() =>
                    update(bi, (b) => {
                      b.conditions[gi].push(blank());
                      return b;
                    })
                  }
                >
                  And…
                </button>
              </div>
            ))}
            <div class="row">
              <button
                type="button"
                class="small"
                onClick={() =>
                  update(bi, (b) => {
                    b.conditions.push([blank()]);
                    return b;
                  })
                }
              >
                {branch.conditions.length === 0 ? "Add a condition" : "Or…"}
              </button>
              {branch.conditions.length > 0 && (
                <button type="button" class="small" onClick={() => update(bi, (b) => ({ ...b, conditions: [] }))}>
                  Make fallback
                </button>
              )}
              <button
                type="button"
                class="small"
                disabled={bi === 0}
                onClick={() => {
                  const next = [...branches];
                  [next[bi - 1], next[bi]] = [next[bi], next[bi - 1]];
                  onChange(next);
                }}
                aria-label={`Move branch ${branch.name} earlier`}
              >
                ↑
              </button>
              <button
                type="button"
                class="small danger"
                disabled={branches.length <= 1}
                onClick={() => {
                  if (!branch.firstAction || confirm(`Delete branch ${branch.name} and its steps?`)) onChange(branches.filter((_, i) => i !== bi));
                }}
              >
                Delete branch
              </button>
            </div>
          </fieldset>
        );
      })}
      <button
        type="button"
        onClick={() => {
          let n = branches.length + 1;
          while (branches.some((b) => b.name === `Branch ${n}`)) n++;
          const fallbackAt = branches.findIndex((b) => b.conditions.length === 0);
          const added: Branch = { name: `Branch ${n}`, conditions: [[blank()]] };
          // New conditional branches go before the fallback, which must stay last to be reached.
          onChange(fallbackAt >= 0 ? [...branches.slice(0, fallbackAt), added, ...branches.slice(fallbackAt)] : [...branches, added]);
        }}
      >
        Add branch
      </button>
    </div>
  );
}

function structuredCloneSafe<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}
