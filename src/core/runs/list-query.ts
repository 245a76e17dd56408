/**
 * GET /api/runs query rules (docs/api.md "4. Run"): every filter value that is not legal is dropped silently
 * (the reply is 200 with that filter not applied); page and limit fall back to 1 and 20; environment
 * falls back to production, so test runs are hidden unless asked for with `test` or `all`.
 */
import { isUuid } from "../../lib/ids";
import { pageOf } from "../../schema/common";
import { RUN_STATUSES, RUN_TRIGGER_TYPES, type Environment, type RunStatus } from "../../schema/run";
import type { RunCountFilter } from "../../store/run-read-repository";
import type { RunListFilter } from "../../store/run-rows";

export type RawQuery = Record<string, unknown>;

/** One text value of a query key; a repeated key or a non-text value counts as invalid. */
function single(query: RawQuery, key: string): string | undefined {
  const value = query[key];
  return typeof value === "string" ? value : undefined;
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[]): T | undefined {
  return value !== undefined && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}

export function parseEnvironments(value: string | undefined): Environment[] {
  if (value === "test") return ["test"];
  if (value === "all") return ["production", "test"];
  return ["production"];
}

export function runListFilter(workspaceId: string, query: RawQuery): RunListFilter & { page: number } {
  const { page, limit, offset } = pageOf({ page: single(query, "page"), limit: single(query, "limit") });
  const workflowId = single(query, "workflowId");
  const tag = single(query, "tag");
  const sort = single(query, "sort");
  return {
    workspaceId,
    page,
    limit,
    offset,
    environments: parseEnvironments(single(query, "environment")),
    status: oneOf<RunStatus>(single(query, "status"), RUN_STATUSES),
    triggerType: oneOf(single(query, "triggerType"), RUN_TRIGGER_TYPES),
    workflowId: workflowId !== undefined && isUuid(workflowId) ? workflowId.toLowerCase() : undefined,
    tag: tag !== undefined && tag !== "" ? tag : undefined,
    sort: sort === "oldest" ? "oldest" : sort === "duration" ? "duration" : "newest",
  };
}

/** Days GET /api/runs/counts counts back by default, and at most. */
export const COUNT_DAYS = 14;
export const MAX_COUNT_DAYS = 90;

/** GET /api/runs/counts: the list's filters (tag, sort and page aside) and `days`, by the same rules (invalid values dropped). */
export function runCountFilter(workspaceId: string, query: RawQuery): RunCountFilter & { days: number } {
  const list = runListFilter(workspaceId, query);
  const days = single(query, "days")?.trim() ?? "";
  const n = /^\d+$/.test(days) ? Number(days) : 0;
  return {
    workspaceId,
    environments: list.environments,
    status: list.status,
    triggerType: list.triggerType,
    workflowId: list.workflowId,
    days: n >= 1 && n <= MAX_COUNT_DAYS ? n : COUNT_DAYS,
  };
}
