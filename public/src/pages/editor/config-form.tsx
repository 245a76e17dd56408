/**
 * The configuration form of one step, generated from the projection endpoint (docs/pieces.md "Schema projections"): the
 * form is narrowed as gate values are picked (the step's scalar values are sent as gate query
 * parameters), dynamic dropdowns come from the options endpoint, and text fields take `{{ }}`
 * expressions with a picker of earlier steps' output paths.
 */
import { useSignal } from "@preact/signals";
import type { JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { api } from "../../api";
import { projection } from "../../catalog";
import { ErrorNote } from "../../components/error-note";
import type { Projection, Property } from "../../types";
import { type DataPath, ExpressionInput, ExpressionPicker } from "./expression-input";
import { bindText } from "../../bind";

export type { DataPath } from "./expression-input";

export interface ConfigFormProps {
  kind: "actions" | "triggers";
  pieceId: string;
  actionId: string;
  stepName: string;
  config: Record<string, unknown>;
  connectionId?: string;
  paths: DataPath[];
  /** Filled from the projection: properties whose choices come from the options endpoint. */
  dynamicFields?: string[];
  onChange(config: Record<string, unknown>): void;
}

const isExpression = (value: unknown) => typeof value === "string" && value.includes("{{");
const fieldId = (step: string, name: string) => `cfg-${step}-${name}`.replace(/[^A-Za-z0-9_-]/g, "_");

function JsonField({
  id,
  value,
  onChange,
  describedBy,
  required,
}: {
  id: string;
  value: unknown;
  onChange(value: unknown): void;
  describedBy?: string;
  required?: boolean;
}) {
  const text = useSignal(value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value, null, 2));
  const error = useSignal<string | null>(null);
  return (
    <>
      <textarea
        id={id}
        class="mono"
        rows={5}
        aria-describedby={describedBy}
        aria-invalid={error.value ? "true" : undefined}
        required={required}
        {...bindText(text)}
        onBlur={() => {
          const raw = text.value.trim();
          if (raw === "") {
            error.value = null;
            onChange(undefined);
            return;
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(raw);
          } catch (e) {
            // Not JSON but holding an expression ("{{greet.output}}", "Hi {{trigger.body.name}}"): kept as text, evaluated at run time.
            if (isExpression(raw)) {
              error.value = null;
              onChange(raw);
            } else error.value = `not valid JSON: ${(e as Error).message}`;
            return;
          }
          error.value = null;
          onChange(parsed);
        }}
      />
      {error.value && (
        <span class="field-error" role="alert">
          {error.value}
        </span>
      )}
    </>
  );
}

/** A free-form object (e.g. data.set_fields' fields): rows of name and value. */
function KeyValueField({
  id,
  value,
  onChange,
  paths,
  label,
}: {
  id: string;
  value: unknown;
  onChange(value: Record<string, unknown>): void;
  paths: DataPath[];
  label: string;
}) {
  const rows = Object.entries((value && typeof value === "object" && !Array.isArray(value) ? value : {}) as Record<string, unknown>);
  const write = (next: Array<[string, unknown]>) => onChange(Object.fromEntries(next));
  return (
    <div class="kv" id={id} role="group" aria-label={label}>
      {rows.map(([key, val], index) => {
        const text = typeof val === "string" ? val : JSON.stringify(val);
        const setValue = (next: string) => {
          const copy = [...rows];
          copy[index] = [key, next];
          write(copy);
        };
        return (
          <div class="kv-row" key={index}>
            <input
              class="kv-name"
              aria-label={`${label}: name ${index + 1}`}
              value={key}
              onChange={(e) => {
                const next = [...rows];
                next[index] = [(e.target as HTMLInputElement).value, val];
                write(next);
              }}
            />
            <ExpressionPicker paths={paths} label={`${label} ${key}`} onInsert={(expr) => setValue(`${typeof val === "string" ? val : ""}${expr}`)} />
            <button
              type="button"
              class="link kv-remove"
              aria-label={`Remove ${key || `row ${index + 1}`}`}
              onClick={() => write(rows.filter((_, i) => i !== index))}
            >
              ×
            </button>
            <ExpressionInput
              aria-label={`${label}: value of ${key || index + 1}`}
              label={`${label} ${key || index + 1}`}
              value={text}
              paths={paths}
              onCommit={setValue}
            />
          </div>
        );
      })}
      <button
        type="button"
        class="small"
        onClick={() => {
          let n = rows.length + 1;
          while (rows.some(([k]) => k === `field${n}`)) n++;
          write([...rows, [`field${n}`, ""]]);
        }}
      >
        Add field
      </button>
    </div>
  );
}

/**
 * The answer of POST .../{actions|triggers}/{id}/options/{name} for the step's current config, loaded again
 * when a refresher (another field or the connection) changes. Only the answer to the newest question is
 * kept: an older, slower one never replaces it.
 */
function usePropertyOptions<T>(props: ConfigFormProps, name: string, refreshers: string[] | undefined) {
  const answer = useSignal<T | null>(null);
  const error = useSignal<unknown>(null);
  const asked = useRef(0);
  const load = async () => {
    const ask = ++asked.current;
    error.value = null;
    try {
      const res = await api.post<T>(
        `/api/pieces/${encodeURIComponent(props.pieceId)}/${props.kind}/${encodeURIComponent(props.actionId)}/options/${encodeURIComponent(name)}`,
        { config: props.config, ...(props.connectionId ? { connectionId: props.connectionId } : {}) },
      );
      if (ask === asked.current) answer.value = res.data;
    } catch (e) {
      if (ask === asked.current) error.value = e;
    }
  };
  const refreshKey = JSON.stringify((refreshers ?? []).filter((r) => r !== "auth").map((r) => props.config[r] ?? null));
  useEffect(() => {
    void load();
  }, [props.connectionId, refreshKey]);
  return { answer, error, load };
}

/** A field whose choices (or fields) the piece gives through the options endpoint. */
interface OptionsFieldProps {
  id: string;
  props: ConfigFormProps;
  name: string;
  value: unknown;
  refreshers?: string[];
  describedBy?: string;
  onChange(value: unknown): void;
}

/** A dropdown whose choices the piece lists for the current config. */
function DynamicSelect({ id, props, name, value, refreshers, describedBy, onChange }: OptionsFieldProps) {
  const { answer, error, load } = usePropertyOptions<{ options: Array<{ label: string; value: unknown }>; placeholder?: string }>(props, name, refreshers);
  const options = answer.value?.options ?? null;
  const placeholder = answer.value?.placeholder;
  return (
    <>
      <div class="row">
        <select
          id={id}
          aria-describedby={describedBy}
          aria-busy={options === null && !error.value ? "true" : undefined}
          value={JSON.stringify(value ?? null)}
          onChange={(e) => onChange(JSON.parse((e.target as HTMLSelectElement).value))}
        >
          <option value="null">{error.value ? "— the choices could not be loaded —" : (placeholder ?? (options ? "— choose —" : "Loading choices…"))}</option>
          {value !== undefined && !options?.some((o) => JSON.stringify(o.value) === JSON.stringify(value)) && (
            <option value={JSON.stringify(value)}>{String(value)}</option>
          )}
          {(options ?? []).map((o) => (
            <option key={JSON.stringify(o.value)} value={JSON.stringify(o.value)}>
              {o.label}
            </option>
          ))}
        </select>
        <button type="button" class="small" onClick={load} aria-label={`Refresh the choices of ${name}`}>
          Refresh
        </button>
      </div>
      <ErrorNote error={error.value} />
    </>
  );
}

/**
 * A property whose fields depend on other settings (an Activepieces DYNAMIC property): the options endpoint
 * answers the fields for the current config, shown as a nested form whose values make up this property's object.
 */
function DependentFields({ id, props, name, value, refreshers, onChange }: OptionsFieldProps) {
  const { answer, error, load } = usePropertyOptions<{ properties?: Record<string, Property> }>(props, name, refreshers);
  const fields = answer.value ? (answer.value.properties ?? {}) : null;
  const current = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const entries = Object.entries(fields ?? {});
  return (
    <div class="dependent-fields" id={id} role="group" aria-busy={fields === null && !error.value ? "true" : undefined}>
      {fields === null && !error.value && <p class="muted">Loading the fields…</p>}
      {fields !== null && entries.length === 0 && <p class="muted">No fields for the current settings.</p>}
      {entries.map(([field, property]) => (
        <Field
          key={field}
          name={field}
          property={property}
          required={property.required === true}
          props={{
            ...props,
            stepName: `${props.stepName}-${name}`,
            config: current,
            dynamicFields: [],
            onChange: (next) => onChange(Object.keys(next).length === 0 ? undefined : next),
          }}
        />
      ))}
      <button type="button" class="small" onClick={load} aria-label={`Refresh the fields of ${name}`}>
        Refresh
      </button>
      <ErrorNote error={error.value} />
    </div>
  );
}

function Field({ name, property, required, props }: { name: string; property: Property; required: boolean; props: ConfigFormProps }) {
  const id = fieldId(props.stepName, name);
  const helpId = property.description ? `${id}-help` : undefined;
  const value = props.config[name];
  // Without a display name the property's own name is shown, made readable (set_fields → Set fields).
  const label = property.displayName ?? (name.charAt(0).toUpperCase() + name.slice(1)).replace(/_/g, " ");
  const set = (next: unknown) => {
    const config = { ...props.config };
    if (next === undefined || next === "") delete config[name];
    else config[name] = next;
    props.onChange(config);
  };
  let control: JSX.Element;
  if (props.dynamicFields?.includes(name) && property.propertyType === "dynamic" && !isExpression(value)) {
    control = <DependentFields id={id} props={props} name={name} value={value} refreshers={property.refreshers} onChange={set} />;
  } else if (props.dynamicFields?.includes(name) && !isExpression(value)) {
    control = <DynamicSelect id={id} props={props} name={name} value={value} refreshers={property.refreshers} describedBy={helpId} onChange={set} />;
  } else if (property.enum && !isExpression(value)) {
    control = (
      <select
        id={id}
        aria-describedby={helpId}
        required={required}
        value={value === undefined ? "" : JSON.stringify(value)}
        onChange={(e) => {
          const raw = (e.target as HTMLSelectElement).value;
          set(raw === "" ? undefined : JSON.parse(raw));
        }}
      >
        <option value="">{required ? "— choose —" : "— none —"}</option>
        {property.enum.map((option) => (
          <option key={String(option)} value={JSON.stringify(option)}>
            {property.enumLabels?.[String(option)] ?? String(option)}
          </option>
        ))}
      </select>
    );
  } else if (property.type === "boolean" && !isExpression(value)) {
    control = (
      <input
        id={id}
        type="checkbox"
        aria-describedby={helpId}
        checked={value === true || (value === undefined && property.default === true)}
        onChange={(e) => set((e.target as HTMLInputElement).checked)}
      />
    );
  } else if (property.type === "object" && !property.properties && !isExpression(value)) {
    control = <KeyValueField id={id} value={value} onChange={set} paths={props.paths} label={label} />;
  } else if (property.type === "object" || property.type === "array" || property.type === "json") {
    control = <JsonField key={`${id}-${JSON.stringify(value)}`} id={id} value={value} onChange={set} describedBy={helpId} required={required} />;
  } else {
    const long = property.type === "code" || property.propertyType === "long_text" || property.propertyType === "code" || !!property.language;
    const numeric = property.type === "number" || property.type === "integer";
    const text = value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
    const commit = (raw: string) => {
      if (numeric && raw.trim() !== "" && !isExpression(raw) && Number.isFinite(Number(raw))) set(Number(raw));
      else set(raw);
    };
    control = (
      <ExpressionInput
        id={id}
        label={label}
        multiline={long}
        inputMode={numeric ? "decimal" : undefined}
        describedBy={helpId}
        required={required}
        value={text}
        placeholder={property.default !== undefined ? String(property.default) : undefined}
        paths={props.paths}
        onCommit={commit}
      />
    );
  }
  const insertable = property.type !== "boolean" && !(property.type === "object" && !property.properties) && !props.dynamicFields?.includes(name);
  return (
    <div class="field">
      <label for={id}>
        {label}
        {required && (
          <span class="required" aria-hidden="true">
            {" "}
            *
          </span>
        )}
        {required && <span class="sr-only"> (required)</span>}
      </label>
      {control}
      {insertable && <ExpressionPicker paths={props.paths} label={label} onInsert={(expr) => set(`${typeof value === "string" ? value : ""}${expr}`)} />}
      {property.description && (
        <span class="help" id={helpId}>
          {property.description}
        </span>
      )}
    </div>
  );
}

export function ConfigForm(props: ConfigFormProps) {
  const schema = useSignal<Projection | null>(null);
  const error = useSignal<unknown>(null);
  const gateKey = JSON.stringify(Object.entries(props.config).filter(([, v]) => typeof v !== "object"));
  useEffect(() => {
    let current = true;
    projection(props.kind, props.pieceId, props.actionId, props.config)
      .then((p) => {
        if (current) {
          schema.value = p;
          error.value = null;
        }
      })
      .catch((e) => {
        if (current) error.value = e;
      });
    return () => {
      current = false;
    };
  }, [props.kind, props.pieceId, props.actionId, gateKey]);
  if (error.value) return <ErrorNote error={error.value} />;
  const p = schema.value;
  if (!p) return <p class="muted">Loading the form…</p>;
  const entries = Object.entries(p.inputSchema.properties);
  if (entries.length === 0) return <p class="muted">Nothing to configure.</p>;
  return (
    <div class="config-form">
      {entries.map(([name, property]) => (
        <Field
          key={name}
          name={name}
          property={property}
          required={p.inputSchema.required.includes(name)}
          props={{ ...props, dynamicFields: p.dynamicFields }}
        />
      ))}
      {p.unresolved.length > 0 && <p class="help">More fields may appear once you choose: {p.unresolved.join(", ")}.</p>}
    </div>
  );
}

/** Paths into a sample value, as expressions rooted at `root` (e.g. `greet.output.text`). */
export function dataPaths(root: string, value: unknown, depth = 3): DataPath[] {
  const out: DataPath[] = [{ label: root, expression: root }];
  const visit = (prefix: string, v: unknown, level: number) => {
    if (level >= depth || v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      if (v.length > 0) {
        out.push({ label: `${prefix}[0]`, expression: `${prefix}[0]` });
        visit(`${prefix}[0]`, v[0], level + 1);
      }
      return;
    }
    for (const [key, child] of Object.entries(v).slice(0, 50)) {
      const path = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${prefix}.${key}` : `${prefix}.\`${key}\``;
      out.push({ label: path, expression: path });
      visit(path, child, level + 1);
    }
  };
  visit(root, value, 0);
  return out;
}
