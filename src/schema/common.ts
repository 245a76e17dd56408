/** Schemas shared by every resource: ids, envelopes, pagination. */
import { Type } from "@sinclair/typebox";
import { t, type TSchema } from "elysia";

// Integers are TypeBox's own Type.Integer everywhere: Elysia's t.Integer also admits numeric strings ("10"),
// and a JSON body is never coerced (a string where an integer is declared is a 400).
export const Uuid = t.String({ format: "uuid", description: "UUID" });
export const IdParams = t.Object({ id: Uuid });
export const DateTime = t.String({ format: "date-time" });

export const Data = <T extends TSchema>(schema: T) => t.Object({ data: schema });
export const List = <T extends TSchema>(schema: T) => t.Object({ data: t.Array(schema), total: Type.Integer() });
/** A List answer of a whole list (not paged): the items and how many. */
export const wholeList = <T>(items: T[]) => ({ data: items, total: items.length });

/** page/limit as query text; out-of-range or unparseable values fall back rather than fail. */
export const PageQuery = {
  page: t.Optional(t.String({ description: "1-based page; values below 1 or unparseable become 1" })),
  limit: t.Optional(t.String({ description: "1–100, default 20; anything else becomes 20" })),
};

export function pageOf(query: { page?: string; limit?: string }) {
  const page = Number.parseInt(query.page ?? "", 10);
  const limit = Number.parseInt(query.limit ?? "", 10);
  const p = Number.isFinite(page) && page >= 1 && String(page) === query.page?.trim() ? page : 1;
  const l = Number.isFinite(limit) && limit >= 1 && limit <= 100 && String(limit) === query.limit?.trim() ? limit : 20;
  return { page: p, limit: l, offset: (p - 1) * l };
}
