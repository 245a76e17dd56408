/**
 * Paging arguments of list tools. The HTTP routes read page/limit as query text; an agent sends numbers,
 * so both are accepted and handed on as the text the route's `pageOf` reads (same fallbacks).
 */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { PageQuery, pageOf } from "../schema/common";

const asNumberOrText = (schema: (typeof PageQuery)["page"]) => t.Optional(t.Union([Type.Integer(), t.String()], { description: schema.description }));

export const PageArgs = { page: asNumberOrText(PageQuery.page), limit: asNumberOrText(PageQuery.limit) };

export interface PageArgsT {
  page?: number | string;
  limit?: number | string;
}

const text = (value: number | string | undefined) => (value === undefined ? undefined : String(value));

/** The query text the HTTP route would have received. */
export const pageText = (args: PageArgsT) => ({ page: text(args.page), limit: text(args.limit) });

export const pageOfArgs = (args: PageArgsT) => pageOf(pageText(args));
