/** Form: a hosted HTML form at the workflow's public URL; each submission starts a run. */
import { definePiece, Property, trigger } from "../../src/pieces-sdk";

const FIELD_TYPES = ["text", "email", "number", "textarea", "checkbox", "select", "date"];
const EXAMPLES: Record<string, unknown> = { text: "text", email: "ada@example.com", number: 42, textarea: "Longer text", checkbox: true, date: "2025-01-06" };

interface FormField {
  name: string;
  label?: string;
  type: string;
  required?: boolean;
  options?: string[];
}

export function formFields(config: Record<string, unknown>): FormField[] {
  const raw = config.fields ?? [];
  if (!Array.isArray(raw) || raw.length === 0) throw new Error("fields must list at least one field {name, label, type}");
  return raw.map((entry: unknown, i) => {
    // A field that is not an object has no name, so it fails the first check as before.
    const f: Record<string, unknown> = entry !== null && typeof entry === "object" ? (entry as Record<string, unknown>) : {};
    if (typeof f.name !== "string" || !/^[A-Za-z_][\w-]*$/.test(f.name)) throw new Error(`fields[${i}] needs a name of letters, digits, _ or -`);
    const type = String(f.type ?? "text");
    if (!FIELD_TYPES.includes(type)) throw new Error(`fields[${i}] ("${f.name}") has type "${type}"; use one of ${FIELD_TYPES.join(", ")}`);
    if (type === "select" && (!Array.isArray(f.options) || f.options.length === 0)) throw new Error(`fields[${i}] ("${f.name}") is a select and needs options`);
    return { ...f, type } as FormField;
  });
}

/** A urlencoded submission → typed values (numbers as numbers, checkboxes as booleans). */
export function normaliseSubmission(config: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of formFields(config)) {
    const value = body[field.name];
    if (field.type === "checkbox") out[field.name] = value === true || value === "on" || value === "true";
    else if (field.type === "number") out[field.name] = value === undefined || value === "" ? null : Number(value);
    else out[field.name] = value ?? null;
  }
  return out;
}

const HTML_ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (s: unknown) => String(s ?? "").replace(/[&<>"']/g, (c) => HTML_ENTITIES[c] ?? c);

export function renderForm(config: Record<string, unknown>, submitUrl: string): string {
  const inputs = formFields(config).map((f) => {
    const id = `f_${escapeHtml(f.name)}`;
    const req = f.required ? " required" : "";
    const label = `<label for="${id}">${escapeHtml(f.label ?? f.name)}${f.required ? " *" : ""}</label>`;
    if (f.type === "textarea") return `${label}<textarea id="${id}" name="${escapeHtml(f.name)}"${req}></textarea>`;
    if (f.type === "select")
      return `${label}<select id="${id}" name="${escapeHtml(f.name)}"${req}>${(f.options ?? []).map((o) => `<option>${escapeHtml(o)}</option>`).join("")}</select>`;
    if (f.type === "checkbox")
      return `<label class="check"><input type="checkbox" id="${id}" name="${escapeHtml(f.name)}"${req}> ${escapeHtml(f.label ?? f.name)}</label>`;
    return `${label}<input type="${f.type}" id="${id}" name="${escapeHtml(f.name)}"${req}>`;
  });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(config.title)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:1rem 0 .25rem}input,textarea,select{width:100%;padding:.5rem;box-sizing:border-box}.check input{width:auto}button{margin-top:1.5rem;padding:.6rem 1.2rem}</style></head>
<body><h1>${escapeHtml(config.title)}</h1>${config.description ? `<p>${escapeHtml(config.description)}</p>` : ""}
<form method="post" action="${escapeHtml(submitUrl)}" enctype="application/x-www-form-urlencoded">${inputs.join("\n")}
<button type="submit">${escapeHtml(config.submit_label || "Submit")}</button></form></body></html>`;
}

export default definePiece({
  id: "form",
  name: "Form",
  version: "1.0.0",
  icon: "📝",
  description: "A hosted web form; each submission starts a run",
  triggers: [
    trigger({
      id: "form_submission",
      name: "On form submission",
      description: "GET on the workflow's public URL shows the form; its POST starts a run with the fields at trigger.body",
      type: "webhook",
      props: {
        title: Property.shortText({ displayName: "Title", required: true }),
        description: Property.longText({ displayName: "Description" }),
        fields: Property.array({
          displayName: "Fields",
          required: true,
          items: {
            type: "object",
            properties: {
              name: { type: "string", required: true, pattern: "^[A-Za-z_][\\w-]*$" },
              label: { type: "string" },
              type: { type: "string", enum: FIELD_TYPES, default: "text" },
              required: { type: "boolean", default: false },
              options: { type: "array", items: { type: "string" }, description: "For type select" },
            },
          },
        }),
        submit_label: Property.shortText({ displayName: "Submit button", default: "Submit" }),
        success_message: Property.shortText({ displayName: "After submitting", default: "Thank you!" }),
      },
      sampleData: { method: "POST", headers: {}, query: {}, body: { name: "Ada", email: "ada@example.com" } },
      sample: (config) => {
        const body: Record<string, unknown> = {};
        for (const f of formFields(config)) body[f.name] = f.type === "select" ? f.options?.[0] : EXAMPLES[f.type];
        return { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, query: {}, body };
      },
      page: ({ config, submitUrl }) => renderForm(config, submitUrl),
    }),
  ],
});
