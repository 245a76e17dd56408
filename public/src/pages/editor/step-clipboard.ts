/**
 * Steps on the clipboard as JSON a person can read and paste anywhere:
 *   { "weft": "steps", "version": 1, "steps": [ {name, type, ...}, ... ] }
 * `steps` is a chain in order; each step carries what is inside it (router branches with their
 * steps, a loop body, an error branch) but not the steps after it. The system clipboard is used when
 * the browser allows it, with a copy kept in this page for when it does not.
 */
import type { ActionNode } from "../../types";
import { stepsOfChain, withoutNext } from "./tree";

export const CLIPBOARD_VERSION = 1;

export interface StepsClipboard {
  weft: "steps";
  version: number;
  steps: ActionNode[];
}

export function encodeSteps(steps: ActionNode[]): string {
  const payload: StepsClipboard = { weft: "steps", version: CLIPBOARD_VERSION, steps: steps.map(withoutNext) };
  return JSON.stringify(payload, null, 2);
}

/** Refused clipboard text: the message says what was found and what is expected. */
export class ClipboardError extends Error {}

const NODE_KEYS = new Set([
  "name",
  "displayName",
  "type",
  "pieceId",
  "pieceVersion",
  "actionId",
  "config",
  "connectionId",
  "valid",
  "skip",
  "nextAction",
  "branches",
  "firstLoopAction",
  "onErrorAction",
]);
const STEP_TYPES = ["PIECE", "ROUTER", "LOOP_ON_ITEMS"];
const isRecord = (value: unknown): value is Record<string, unknown> => !!value && typeof value === "object" && !Array.isArray(value);

/** Checks what the server's schema would refuse outright, so a bad paste is a message here, not a failed save. */
function checkNode(value: unknown, where: string) {
  if (!isRecord(value)) throw new ClipboardError(`${where} is not an object`);
  if (typeof value.name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,99}$/.test(value.name))
    throw new ClipboardError(`${where} needs a "name" of letters, digits and _ (not starting with a digit)`);
  const at = `step ${value.name}`;
  if (typeof value.type !== "string" || !STEP_TYPES.includes(value.type))
    throw new ClipboardError(`${at} has type ${JSON.stringify(value.type)}; a pasted step is one of ${STEP_TYPES.join(", ")} (a trigger cannot be pasted)`);
  const unknown = Object.keys(value).filter((key) => !NODE_KEYS.has(key));
  if (unknown.length > 0) throw new ClipboardError(`${at} has unknown keys: ${unknown.join(", ")}; allowed are ${[...NODE_KEYS].join(", ")}`);
  if (value.config !== undefined && !isRecord(value.config)) throw new ClipboardError(`${at}: "config" must be an object`);
  for (const key of ["nextAction", "firstLoopAction", "onErrorAction"]) if (value[key] !== undefined) checkNode(value[key], `${at}, ${key}`);
  if (value.branches !== undefined) {
    if (!Array.isArray(value.branches)) throw new ClipboardError(`${at}: "branches" must be a list`);
    value.branches.forEach((branch, index) => {
      if (!isRecord(branch) || typeof branch.name !== "string" || !Array.isArray(branch.conditions))
        throw new ClipboardError(`${at}, branch ${index + 1} needs a "name" and a list of "conditions"`);
      if (branch.firstAction !== undefined) checkNode(branch.firstAction, `${at}, branch ${branch.name}`);
    });
  }
}

/** The steps in clipboard text, or a ClipboardError saying why the text holds none. */
export function decodeSteps(text: string): ActionNode[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ClipboardError(`The clipboard holds no Weft steps: its text is not JSON (it starts with ${JSON.stringify(text.trim().slice(0, 30))})`);
  }
  if (!isRecord(parsed) || parsed.weft !== "steps")
    throw new ClipboardError('The clipboard holds no Weft steps: expected JSON like {"weft": "steps", "version": 1, "steps": [...]}');
  if (parsed.version !== CLIPBOARD_VERSION)
    throw new ClipboardError(`The clipboard's steps are version ${JSON.stringify(parsed.version)}; this editor reads version ${CLIPBOARD_VERSION}`);
  if (!Array.isArray(parsed.steps) || parsed.steps.length === 0)
    throw new ClipboardError('The clipboard holds no Weft steps: "steps" must be a non-empty list');
  for (const [index, step] of parsed.steps.entries()) checkNode(step, `step ${index + 1} on the clipboard`);
  // A hand-written step may chain its followers in nextAction; they are pasted in order after it.
  return (parsed.steps as ActionNode[]).flatMap((step) => stepsOfChain(step));
}

/** The last steps copied in this page, for browsers that refuse the system clipboard. */
let kept: string | null = null;

/** Puts `text` on the system clipboard when allowed; it is always kept in this page too. */
export async function writeClipboard(text: string): Promise<"system" | "page"> {
  kept = text;
  try {
    await navigator.clipboard.writeText(text);
    return "system";
  } catch {
    return "page";
  }
}

/** The system clipboard's text, or the page's copy when the browser refuses to read it. */
export async function readClipboard(): Promise<string | null> {
  try {
    return await navigator.clipboard.readText();
  } catch {
    return kept;
  }
}

/** Keeps text copied with the keyboard (the copy event) for readClipboard's fallback. */
export function keepInPage(text: string) {
  kept = text;
}
