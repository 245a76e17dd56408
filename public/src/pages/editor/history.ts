/**
 * Undo and redo of the editor's draft: a bounded list of earlier definitions and the ones undone.
 * Consecutive edits of the same text (one config field, one display name) within COALESCE_MS are one
 * entry, so an undo takes back a whole burst of typing rather than one keystroke.
 */

export const HISTORY_LIMIT = 100;
export const COALESCE_MS = 1000;

/** What an edit changed: nothing, a single text value (named by its path), or anything else. */
export type Edit = { kind: "none" } | { kind: "text"; path: string } | { kind: "other" };

const isRecord = (value: unknown): value is Record<string, unknown> => !!value && typeof value === "object" && !Array.isArray(value);
const textLike = (value: unknown) => value === undefined || typeof value === "string";

/** Compares two definitions; only an edit confined to one string value (set, changed or cleared) is "text". */
export function describeEdit(before: unknown, after: unknown): Edit {
  const differences: Array<{ path: string; text: boolean }> = [];
  const visit = (a: unknown, b: unknown, path: string) => {
    if (a === b || differences.length > 1) return;
    if (isRecord(a) && isRecord(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) visit(a[key], b[key], `${path}/${key}`);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      for (const [index, item] of a.entries()) visit(item, b[index], `${path}/${index}`);
      return;
    }
    differences.push({ path, text: textLike(a) && textLike(b) });
  };
  visit(before, after, "");
  if (differences.length === 0) return { kind: "none" };
  const [only] = differences;
  return differences.length === 1 && only?.text ? { kind: "text", path: only.path } : { kind: "other" };
}

interface Entry<T> {
  state: T;
  /** The text path this entry's edit changed, when it may absorb the next edit of the same path. */
  path: string | null;
  at: number;
}

export interface History<T> {
  /** Notes that the state was `before` until an edit described by `edit`. */
  record(before: T, edit: Edit, at?: number): void;
  /** The state to go back to from `current`, or undefined when there is nothing to undo. */
  undo(current: T): T | undefined;
  /** The state to go forward to from `current`, or undefined when nothing was undone. */
  redo(current: T): T | undefined;
  clear(): void;
  canUndo(): boolean;
  canRedo(): boolean;
}

export function createHistory<T>(options: { limit?: number; coalesceMs?: number; now?: () => number } = {}): History<T> {
  const limit = options.limit ?? HISTORY_LIMIT;
  const coalesceMs = options.coalesceMs ?? COALESCE_MS;
  const now = options.now ?? Date.now;
  const past: Entry<T>[] = [];
  let future: T[] = [];
  // The newest entry while it may still absorb edits; undo and redo close it.
  let open: Entry<T> | null = null;
  return {
    record(before, edit, at = now()) {
      if (edit.kind === "none") return;
      future = [];
      const path = edit.kind === "text" ? edit.path : null;
      if (open && path !== null && open.path === path && at - open.at <= coalesceMs) {
        open.at = at;
        return;
      }
      open = { state: before, path, at };
      past.push(open);
      if (past.length > limit) past.shift();
    },
    undo(current) {
      const entry = past.pop();
      if (!entry) return undefined;
      open = null;
      future.push(current);
      return entry.state;
    },
    redo(current) {
      if (future.length === 0) return undefined;
      const next = future.pop() as T;
      open = null;
      past.push({ state: current, path: null, at: now() });
      return next;
    },
    clear() {
      past.length = 0;
      future = [];
      open = null;
    },
    canUndo: () => past.length > 0,
    canRedo: () => future.length > 0,
  };
}
