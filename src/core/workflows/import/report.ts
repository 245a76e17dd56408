/**
 * What an import from another tool carried over (docs/import.md): one entry per foreign node or step,
 * mapped (same behaviour), approximated (how is said) or not mapped (why; a marked placeholder step stands
 * in its place, so the draft does not pass the publish gate until it is replaced).
 */
import type { ActionNodeT, FlowVersionT } from "../../../schema/workflow";

export type ImportOutcome = "mapped" | "approximated" | "not_mapped";

export interface ImportReportEntry {
  /** The node's or step's name in the foreign file. */
  node: string;
  /** Its type there (n8n: the node type; Activepieces: the step type, and the piece for a PIECE step). */
  type: string;
  outcome: ImportOutcome;
  /** The Weft step it became (absent when it needed none, e.g. a No-op). */
  step?: string;
  /** How it was approximated, or why it was not mapped. */
  note?: string;
}

export interface ImportReport {
  format: "activepieces" | "n8n";
  entries: ImportReportEntry[];
  /** Packages the workflow uses that this server does not serve, with the command that installs each. */
  missingPieces: Array<{ package: string; version?: string; command: string }>;
  /** True when a placeholder stands in for something: the draft does not pass the gate until it is replaced. */
  hasPlaceholders: boolean;
}

export interface ImportResult {
  name: string;
  definition: FlowVersionT;
  report: ImportReport;
}

/** The piece id a placeholder names: no server serves it, so the publish gate refuses the draft until it is replaced. */
export const PLACEHOLDER_PIECE = "import-placeholder";

export function placeholderStep(name: string, foreignType: string, why: string, original: unknown): ActionNodeT {
  return {
    name,
    displayName: `REPLACE ME: ${foreignType}`.slice(0, 200),
    type: "PIECE",
    pieceId: PLACEHOLDER_PIECE,
    actionId: "replace_me",
    config: { why, original },
    valid: false,
  };
}

/** Names unique in the tree and legal as expression roots (letters, digits, underscores). */
export class StepNames {
  private readonly taken = new Set<string>(["trigger", "variables", "run", "loop", "item"]);
  private readonly byForeign = new Map<string, string>();

  of(foreign: string): string {
    const known = this.byForeign.get(foreign);
    if (known) return known;
    let base = foreign
      .replace(/[^A-Za-z0-9_]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, 90);
    if (!base || !/^[A-Za-z_]/.test(base)) base = `step_${base}`;
    let name = base;
    for (let i = 2; this.taken.has(name); i++) name = `${base}_${i}`;
    this.taken.add(name);
    this.byForeign.set(foreign, name);
    return name;
  }
}

export function emptyFlow(trigger: FlowVersionT["trigger"]): FlowVersionT {
  return { schemaVersion: 2, trigger, settings: {}, variables: {}, annotations: null, pinnedData: {} };
}

/** Links a list of steps into a nextAction chain; answers the first (or undefined for none). */
export function chain(steps: ActionNodeT[]): ActionNodeT | undefined {
  for (let i = steps.length - 2; i >= 0; i--) {
    const last = lastOf(steps[i]!);
    last.nextAction = steps[i + 1];
  }
  return steps[0];
}

export function lastOf(step: ActionNodeT): ActionNodeT {
  let s = step;
  while (s.nextAction) s = s.nextAction;
  return s;
}
