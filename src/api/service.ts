/** Health, the OpenAPI contract and its docs page — served from inside the binary (the UI is ./ui.ts). */
import { Elysia, t } from "elysia";
import { checkDatabase } from "../store/db";
import type { AppDeps } from "./deps";

const tags = ["Service"];
const html = (body: string) => new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });

export const serviceApi = ({ security, contract, db }: AppDeps) =>
  new Elysia({ name: "api-service" })
    .use(security)
    .get(
      "/healthz",
      () => {
        checkDatabase(db);
        return { data: { status: "ok" } };
      },
      {
        permission: "public",
        detail: { tags, summary: "Liveness and database check for load balancers" },
        response: t.Object({ data: t.Object({ status: t.String() }) }),
      },
    )
    .get("/api/openapi.json", () => contract.document(), { permission: "public", detail: { tags, summary: "The OpenAPI 3.1 contract" } })
    .get("/api/docs", () => html(contract.docsPage()), { permission: "public", detail: { tags, summary: "Human-readable API documentation" } });
