/**
 * Health, readiness, metrics and the OpenAPI contract (the reference page is ./api-docs.ts, the UI ./ui.ts).
 * /healthz says the process answers and its database did a moment ago (liveness, src/core/liveness.ts); /readyz that this instance may take traffic
 * (src/core/readiness.ts); /metrics is Prometheus' text format (src/core/metrics.ts), for a token with
 * `metrics:read` or a scraper calling from WEFT_METRICS_ALLOW_CIDRS.
 */
import { Elysia, t } from "elysia";
import type { Metrics } from "../core/metrics";
import { readiness } from "../core/readiness";
import { AppError } from "../http/errors";
import { AddressRanges } from "../net/address-ranges";
import type { AppDeps } from "./deps";
import { acceptsGzip, gzip } from "./page-bundle";

const tags = ["Service"];

/** The setting whose ranges may read /metrics without a token, as refusals name it. */
export const METRICS_ALLOW_SETTING = "WEFT_METRICS_ALLOW_CIDRS";

/** A scrape's answer (also served by a worker instance's own server, src/cli.ts). */
export async function metricsResponse(metrics: Metrics): Promise<Response> {
  return new Response(await metrics.scrape(), { headers: { "content-type": metrics.contentType } });
}

export const serviceApi = (deps: AppDeps) => {
  const { security, contract, vitalStorage, metrics } = deps;
  const metricsRanges = new AddressRanges(deps.config.metrics.allowCidrs);
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
        // From the last round trip to the database when it is under a second old (src/core/liveness.ts).
        await deps.liveness.check().catch((error: unknown) => {
          throw new AppError("SERVICE_UNAVAILABLE", `the database does not answer: ${(error as Error)?.message ?? String(error)}`);
        });
        return { data: { status: "ok" } };
      },
      {
        permission: "public",
        detail: { tags, summary: "Liveness and database check for load balancers" },
        response: t.Object({ data: t.Object({ status: t.String() }) }),
      },
    )
    .get(
      "/readyz",
      async () => {
        const state = await readiness({ storage: vitalStorage, engine: deps.engine });
        if (!state.ready) {
          throw new AppError("SERVICE_UNAVAILABLE", `not ready: ${state.notReady.join("; ")}`, { checks: state.checks }, undefined, { "retry-after": "1" });
        }
        return { data: { status: "ready", checks: state.checks } };
      },
      {
        permission: "public",
        detail: {
          tags,
          summary: "Readiness for load balancers: storage answers, migrations applied, engine started",
          description:
            "200 once the database answers, its schema is the one this build migrates to, and the engine has started (runs a restart interrupted are recovered); 503 SERVICE_UNAVAILABLE otherwise (also while shutting down), its message and error.details.checks naming what is not ready.",
        },
        response: t.Object({ data: t.Object({ status: t.String(), checks: t.Record(t.String(), t.String()) }) }),
      },
    )
    .get("/metrics", () => metricsResponse(metrics), {
      permission: { scope: "metrics:read", orFrom: { ranges: metricsRanges, setting: METRICS_ALLOW_SETTING } },
      detail: {
        tags,
        summary: "Prometheus metrics in the text exposition format",
        description: `Runs, steps, webhooks, the run writer, schedules, queues and processes (docs/operations.md, "Metrics"). Needs a token with the scope metrics:read, or a call from an address in ${METRICS_ALLOW_SETTING} (none by default). Counters are kept in memory as things happen: a scrape reads no stored run.`,
        responses: { "200": { description: "The series, text/plain; version=0.0.4", content: { "text/plain": { schema: { type: "string" } } } } },
      },
    })
    .get("/api/openapi.json", ({ request }) => contractResponse(request), {
      permission: "public",
      detail: { tags, summary: "The OpenAPI 3.1 contract, gzipped when accepted" },
    });
};
