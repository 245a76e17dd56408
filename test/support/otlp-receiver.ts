/**
 * A loopback OTLP/HTTP traces receiver for tests. No OpenTelemetry Collector is packaged in Debian, so this
 * fixture speaks the documented protocol instead: it accepts `POST /v1/traces` with the OTLP/JSON encoding
 * (ExportTraceServiceRequest: resourceSpans → scopeSpans → spans, ids as hex strings) and answers 200 with an
 * empty ExportTraceServiceResponse, as a collector does. Every span received is decoded into a flat record.
 *   const receiver = startOtlpReceiver(); ... receiver.url; receiver.spans; receiver.stop();
 */

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  /** The resource's attributes (service.name, ...). */
  resource: Record<string, string | number | boolean>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
type KeyValue = { key: string; value: AnyValue };

const plainValue = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? ""));
const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, plainValue(a.value)]));
const ms = (nanos: string | number | undefined) => Number(BigInt(nanos ?? 0) / 1_000_000n);

export function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (request.method !== "POST" || path !== "/v1/traces") return new Response("not found", { status: 404 });
      contentTypes.push(request.headers.get("content-type") ?? "");
      const body = (await request.json()) as {
        resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, any>[] }[] }[];
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: s.kind ?? 0,
              startMs: ms(s.startTimeUnixNano),
              endMs: ms(s.endTimeUnixNano),
              attributes: attributesOf(s.attributes),
              statusCode: s.status?.code ?? 0,
              statusMessage: s.status?.message ?? "",
              resource,
            });
          }
        }
      }
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    contentTypes,
    /** The spans of one run (its run span and its steps' spans). */
    spansOfRun: (runId: string) => spans.filter((s) => s.attributes["weft.run.id"] === runId),
    stop: () => server.stop(true),
  };
}
