/** Text: templates, replace, split and case changes. Every action is pure. */
import { action, definePiece, Property, Show } from "../../src/pieces-sdk";
import { readPath } from "../data";

const str = (v: unknown) => (v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));

function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

const CASES: Record<string, (t: string) => string> = {
  upper: (t) => t.toUpperCase(),
  lower: (t) => t.toLowerCase(),
  title: (t) => t.toLowerCase().replace(/\b\p{L}/gu, (c) => c.toUpperCase()),
  snake: (t) =>
    words(t)
      .map((w) => w.toLowerCase())
      .join("_"),
  kebab: (t) =>
    words(t)
      .map((w) => w.toLowerCase())
      .join("-"),
  camel: (t) =>
    words(t)
      .map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase()))
      .join(""),
};

export default definePiece({
  id: "text",
  name: "Text",
  version: "1.0.0",
  icon: "🔤",
  description: "Build and transform text",
  actions: [
    action({
      id: "template",
      name: "Template",
      description: "Fill {name} placeholders (dotted paths allowed) from values; {{ expressions }} are already evaluated by the engine",
      sideEffects: "pure",
      props: {
        template: Property.longText({ displayName: "Template", required: true }),
        values: Property.json({ displayName: "Values", description: "Object the {placeholders} read from" }),
      },
      outputSchema: { type: "object", properties: { text: { type: "string" } } },
      sampleData: { text: "Hello Ada" },
      run: ({ config }) => ({
        text: str(config.template).replace(/\{([A-Za-z_][\w.]*)\}/g, (whole, path) => {
          const value = readPath(config.values ?? {}, path);
          return value === undefined ? whole : str(value);
        }),
      }),
    }),
    action({
      id: "replace",
      name: "Replace",
      description: "Replace text or a regular expression",
      sideEffects: "pure",
      props: {
        text: Property.longText({ displayName: "Text", required: true }),
        find: Property.shortText({ displayName: "Find", required: true }),
        replace_with: Property.shortText({ displayName: "Replace with", default: "" }),
        use_regex: Property.checkbox({ displayName: "Regular expression", default: false }),
        flags: Property.shortText({ displayName: "Regex flags", default: "g", pattern: "^[gimsuy]*$", displayConditions: [Show.eq("use_regex", true)] }),
        all: Property.checkbox({ displayName: "Replace all occurrences", default: true, displayConditions: [Show.eq("use_regex", false)] }),
      },
      outputSchema: { type: "object", properties: { text: { type: "string" } } },
      sampleData: { text: "Hello world" },
      run: ({ config }) => {
        const text = str(config.text);
        const find = str(config.find);
        const replacement = str(config.replace_with);
        if (config.use_regex === true) {
          const flags = str(config.flags ?? "g");
          let regex: RegExp;
          try {
            regex = new RegExp(find, flags);
          } catch (error) {
            throw new Error(`find is not a valid regular expression: ${(error as Error).message}`);
          }
          return { text: text.replace(regex, replacement) };
        }
        return { text: config.all === false ? text.replace(find, () => replacement) : text.split(find).join(replacement) };
      },
    }),
    action({
      id: "split",
      name: "Split",
      description: "Split text into a list",
      sideEffects: "pure",
      props: {
        text: Property.longText({ displayName: "Text", required: true }),
        separator: Property.shortText({ displayName: "Separator", default: ",", description: "Use \\n for new lines" }),
        trim: Property.checkbox({ displayName: "Trim items", default: true }),
        remove_empty: Property.checkbox({ displayName: "Remove empty items", default: true }),
      },
      outputSchema: { type: "object", properties: { items: { type: "array", items: { type: "string" } }, count: { type: "integer" } } },
      sampleData: { items: ["a", "b"], count: 2 },
      run: ({ config }) => {
        const separator = str(config.separator ?? ",")
          .replace(/\\n/g, "\n")
          .replace(/\\t/g, "\t");
        let items = str(config.text).split(separator);
        if (config.trim !== false) items = items.map((s) => s.trim());
        if (config.remove_empty !== false) items = items.filter((s) => s !== "");
        return { items, count: items.length };
      },
    }),
    action({
      id: "case",
      name: "Change case",
      description: "Upper, lower, title, snake, kebab or camel case",
      sideEffects: "pure",
      props: {
        text: Property.shortText({ displayName: "Text", required: true }),
        case: Property.staticDropdown({ displayName: "Case", required: true, options: Object.keys(CASES) }),
      },
      outputSchema: { type: "object", properties: { text: { type: "string" } } },
      sampleData: { text: "HELLO" },
      run: ({ config }) => {
        const fn = CASES[str(config.case)];
        if (!fn) throw new Error(`case "${str(config.case)}" is unknown; use one of ${Object.keys(CASES).join(", ")}`);
        return { text: fn(str(config.text)) };
      },
    }),
  ],
});
