/**
 * The workflow's variables ({{variables.name}}): GET/PUT /api/workflows/{id}/variables. Secret values
 * come back masked (null); a secret row left untouched is sent without a value, which keeps the stored
 * one, so opening and saving never wipes a secret. Variables apply to test and live runs at once.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../../api";
import { Dialog } from "../../components/dialog";
import { ErrorNote } from "../../components/error-note";
import type { Variable } from "../../types";
import { useCall } from "../../use-call";
import { Table } from "../../components/table";

/** One editable row; `text` is what the person sees, `stored` marks a secret whose value stays hidden. */
interface Row {
  key: number;
  name: string;
  text: string;
  secret: boolean;
  description: string;
  stored: boolean;
  json: boolean;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
let rowKey = 0;

function toRow(v: Variable): Row {
  const json = v.value !== null && v.value !== undefined && typeof v.value !== "string";
  return {
    key: ++rowKey,
    name: v.name,
    secret: v.secret,
    description: v.description ?? "",
    stored: v.secret && v.value === null,
    json,
    text: json ? JSON.stringify(v.value) : String(v.value ?? ""),
  };
}

/** A value typed as text stays text, unless it was JSON when read (numbers, objects) and still parses. */
function parsedValue(row: Row): unknown {
  if (row.json) {
    try {
      return JSON.parse(row.text);
    } catch {
      return row.text;
    }
  }
  return row.text;
}

export function problemsOf(rows: Array<Pick<Row, "name">>): string | null {
  const seen = new Set<string>();
  for (const row of rows) {
    if (!NAME.test(row.name)) return `"${row.name}" is not a usable name: use letters, digits and _ (not starting with a digit), at most 64 characters`;
    if (seen.has(row.name)) return `two variables are named "${row.name}"; names are unique`;
    seen.add(row.name);
  }
  return null;
}

export function VariablesDialog({ workflowId, onClose }: { workflowId: string; onClose(): void }) {
  const rows = useSignal<Row[] | null>(null);
  const saved = useSignal(false);
  const { busy, error, call } = useCall();
  useEffect(() => {
    void call(async () => {
      rows.value = (await api.get<Variable[]>(`/api/workflows/${workflowId}/variables`)).data.map(toRow);
    });
  }, [workflowId]);

  /** The rows being edited; the handlers that call this belong to the table, which shows only once they are loaded. */
  const loaded = (): Row[] => {
    if (!rows.value) throw new Error("the variables are not loaded yet");
    return rows.value;
  };
  const update = (key: number, patch: Partial<Row>) => {
    saved.value = false;
    rows.value = loaded().map((r) => (r.key === key ? { ...r, ...patch } : r));
  };
  const save = (event: Event) => {
    event.preventDefault();
    const list = rows.value ?? [];
    const problem = problemsOf(list);
    if (problem) {
      error.value = new Error(problem);
      return;
    }
    void call(async () => {
      const variables = list.map((r) => ({
        name: r.name,
        secret: r.secret,
        description: r.description,
        // A stored secret nobody retyped is sent without a value: the server keeps it.
        ...(r.secret && r.stored ? {} : { value: parsedValue(r) }),
      }));
      const res = await api.put<Variable[]>(`/api/workflows/${workflowId}/variables`, { variables });
      rows.value = res.data.map(toRow);
      saved.value = true;
    });
  };

  return (
    <Dialog title="Variables" onClose={onClose} wide>
      <p class="help">
        Use them in any field as <code>{"{{variables.name}}"}</code>. They apply to test and live runs at once (they are not part of a published version).
        Secret values are stored encrypted and never shown again.
      </p>
      {rows.value === null && !error.value && <p class="muted">Loading…</p>}
      {rows.value && (
        <form class="stack" onSubmit={save} aria-label="Workflow variables">
          {rows.value.length === 0 && <p class="empty">No variables yet. Add one for values you reuse across steps, such as an API base URL.</p>}
          {rows.value.length > 0 && (
            <Table class="variables" columns={["Name", "Value", "Secret", "Description"]} actions="Remove">
              {rows.value.map((r, i) => (
                <tr key={r.key}>
                  <td>
                    <input
                      aria-label={`Name of variable ${i + 1}`}
                      value={r.name}
                      required
                      onInput={(e) => update(r.key, { name: (e.target as HTMLInputElement).value.trim() })}
                    />
                  </td>
                  <td>
                    <input
                      aria-label={`Value of ${r.name || `variable ${i + 1}`}`}
                      {...inputType(r.secret ? "password" : "text")}
                      autoComplete="off"
                      value={r.stored ? "" : r.text}
                      placeholder={r.stored ? "stored — type to replace" : ""}
                      onInput={(e) => update(r.key, { text: (e.target as HTMLInputElement).value, stored: false })}
                    />
                  </td>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`${r.name || `Variable ${i + 1}`} is secret`}
                      checked={r.secret}
                      onChange={(e) => update(r.key, { secret: (e.target as HTMLInputElement).checked, stored: false })}
                    />
                  </td>
                  <td>
                    <input
                      aria-label={`Description of ${r.name || `variable ${i + 1}`}`}
                      value={r.description}
                      maxLength={500}
                      onInput={(e) => update(r.key, { description: (e.target as HTMLInputElement).value })}
                    />
                  </td>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-label={`Remove ${r.name || `variable ${i + 1}`}`}
                      onClick={() => {
                        saved.value = false;
                        rows.value = loaded().filter((x) => x.key !== r.key);
                      }}
                    >
                      ×
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )}
          <div class="row">
            <button
              type="button"
              class="small"
              onClick={() => {
                const current = loaded();
                const taken = new Set(current.map((r) => r.name));
                let n = current.length + 1;
                while (taken.has(`var${n}`)) n++;
                saved.value = false;
                rows.value = [...current, { key: ++rowKey, name: `var${n}`, text: "", secret: false, description: "", stored: false, json: false }];
              }}
            >
              Add variable
            </button>
          </div>
          <ErrorNote error={error.value} />
          <div class="row">
            <button type="submit" class="primary" disabled={busy.value}>
              {busy.value ? "Saving…" : "Save variables"}
            </button>
            {saved.value && (
              <span class="muted" role="status">
                Variables saved.
              </span>
            )}
          </div>
        </form>
      )}
      {!rows.value && <ErrorNote error={error.value} />}
    </Dialog>
  );
}

/** A text input that masks its value or not (Preact's types model password and text inputs as separate kinds). */
function inputType(type: "password" | "text"): { type: "text" } {
  return { type } as { type: "text" };
}
