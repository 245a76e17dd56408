/** Health and the OpenAPI contract (the reference page is ./api-docs.ts, the UI ./ui.ts). */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { acceptsGzip, gzip } from "./page-bundle";

const tags = ["Service"];

export const serviceApi = ({ security, contract, vitalStorage }: AppDeps) => {
  // The contract is fixed once the routes are: serialised and gzipped once (about 230 KB, 20 KB gzipped).
  let served: { json: Uint8Array<ArrayBuffer>; gzip: Uint8Array<ArrayBuffer> } | undefined;
  const contractResponse = (request: Request) => {
    if (!served) {
      const json = new TextEncoder().encode(JSON.stringify(contract.document()));
      served = { json, gzip: gzip(json) };
    }
    const gzipped = acceptsGzip(request);
    return new Response(gzipped ? served.gzip : served.json, {
      headers: { "content-type": "application/json", vary: "accept-encoding", ...(gzipped ? { "content-encoding": "gzip" } : {}) },
    });
  };
  return new Elysia({ name: "api-service" })
    .use(security)
    .get(
      "/healthz",
      async () => {
        // On the vital signs' connections: a probe never waits for a pooled connection behind busy requests.
        await vitalStorage.ping();
        return { data: { status: "ok" } };
      },
      {
        permission: "public",
        detail: { tags, summary: "Liveness and database check for load balancers" },
        response: t.Object({ data: t.Object({ status: t.String() }) }),
      },
    )
    .get("/api/openapi.json", ({ request }) => contractResponse(request), {
      permission: "public",
      detail: { tags, summary: "The OpenAPI 3.1 contract, gzipped when accepted" },
    });
};
