/**
 * How users write code for the `code` piece (docs/security.md, "Writing code"):
 *
 * - a function body that reads `input` and `return`s the result — the short form:
 *     return { total: input.items.reduce((sum, item) => sum + item.price, 0) }
 * - a module exporting the function, as Activepieces (`export const code = async (inputs) => ...`)
 *   and ES modules (`export default (input) => ...`) write it.
 *
 * Both may be async and may `await`. A top-level `export` statement makes it a module.
 */
export type CodeShape = "body" | "module";

const TOP_LEVEL_EXPORT = /^[ \t]*export\s+(?:default\b|const\b|let\b|var\b|async\b|function\b|\{)/m;

export function codeShape(code: string): CodeShape {
  return TOP_LEVEL_EXPORT.test(code) ? "module" : "body";
}

/** The exports a module may provide, in the order they are looked for. */
export const ENTRY_EXPORTS = ["code", "default", "main"] as const;
