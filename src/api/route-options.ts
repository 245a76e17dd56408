/**
 * The options most routes declare, said once per kind of route: the answer's schema and the summary under the
 * area's tag (CONTRIBUTING.md, "Add a route"). Each gives a plain options object, so Elysia infers params and
 * checks the answer from it as from one spelled out, and the contract is the same. Every route still names its
 * scope itself, where a reader looks for it, and adds `body`, `query` or `idempotent` beside it
 * (`{ permission: "workflow:write", ...route.byId(Folder, "Rename a folder"), body: X }`).
 */
import { t, type TSchema } from "elysia";
import { Data, IdParams, List } from "../schema/common";

/** The answer of a delete that says only what it deleted. */
export const Deleted = t.Object({ id: t.String(), deleted: t.Boolean() });

/** What the contract says of a route: its summary, and a description where the summary is not enough. */
export type About = string | { summary: string; description: string };

/** The option builders of one area's routes, all under its tag(s). */
export function routeOptions(tags: string[]) {
  const detail = (about: About) => (typeof about === "string" ? { tags, summary: about } : { tags, ...about });
  return {
    /** The `detail` of a route under the area's tag(s), for a route these builders do not fit. */
    detail,
    /** A route answering `{ data }` of `schema`. */
    answer: <S extends TSchema>(schema: S, about: About) => ({ response: Data(schema), detail: detail(about) }),
    /** A route on the one record named by `:id`, answering `{ data }` of `schema`. */
    byId: <S extends TSchema>(schema: S, about: About) => ({
      params: IdParams,
      response: Data(schema),
      detail: detail(about),
    }),
    /** A route answering a list, `{ data: [...], total }`. */
    list: <S extends TSchema>(schema: S, about: About) => ({ response: List(schema), detail: detail(about) }),
    /** A route that creates: 201 with `{ data }` of `schema` (the handler answers through `created`). */
    creates: <S extends TSchema>(schema: S, about: About) => ({ response: { 201: Data(schema) }, detail: detail(about) }),
  };
}

/** The answer of a route that created `data`: 201 with it in the envelope. */
export function created<T>(set: { status?: number | string }, data: T) {
  set.status = 201;
  return { data };
}
