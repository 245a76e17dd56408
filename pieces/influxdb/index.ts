/**
 * InfluxDB: write points and query, on InfluxDB 1.x (a database, user and password; InfluxQL, and Flux where
 * the server has it) and 2.x (an organisation, a bucket and a token; Flux, and InfluxQL through its 1.x
 * compatibility endpoint). Line protocol is built by InfluxDB's own client (@influxdata/influxdb-client:
 * its Point escapes names, tags and fields and converts times to the precision), and its annotated-CSV
 * reader parses Flux answers; every request goes through ctx.fetch (the SSRF guard), so a LAN server needs
 * its range allowed (WEFT_ALLOW_CIDRS). docs/pieces/influxdb.md lists the endpoints each step uses.
 */
import { action, Auth, baseUrlOf, connectionCheck, definePiece, httpFetch, jsonObjectOf, labelled, loadOnce, Property } from "../../src/pieces-sdk";
import type { GuardedFetch, ResolvedAuth } from "../../src/pieces-sdk/types";

/** InfluxDB's client, loaded with the first InfluxDB step. */
const influx = loadOnce(() => import("@influxdata/influxdb-client"));

const PRECISIONS = ["ns", "us", "ms", "s"] as const;
type Precision = (typeof PRECISIONS)[number];

export interface Server {
  version: "1" | "2";
  base: string;
  /** The Authorization header, or none for a 1.x server without authentication. */
  authorization?: string;
  database: string;
  org: string;
  bucket: string;
}

/** The connection's server, or why it is unusable. */
export function serverOf(auth: ResolvedAuth | undefined): Server {
  if (auth?.kind !== "custom")
    throw new Error("this step needs an InfluxDB connection (URL, and a database or an organisation, bucket and token); set its connectionId");
  const v = auth.values;
  const text = baseUrlOf(v.url, "the InfluxDB URL", "http://192.168.1.30:8086");
  const version = String(v.version ?? "1") === "2" ? "2" : "1";
  const token = String(v.token ?? "").trim();
  const username = String(v.username ?? "");
  const password = String(v.password ?? "");
  let authorization: string | undefined;
  if (version === "2") {
    if (!token) throw new Error("an InfluxDB 2.x connection needs an API token (InfluxDB → Load Data → API Tokens)");
    if (!String(v.org ?? "").trim()) throw new Error("an InfluxDB 2.x connection needs the organisation's name (or id)");
    authorization = `Token ${token}`;
  } else if (token) authorization = `Token ${token}`;
  else if (username) authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  return {
    version,
    base: text,
    authorization,
    database: String(v.database ?? "").trim(),
    org: String(v.org ?? "").trim(),
    bucket: String(v.bucket ?? "").trim(),
  };
}

/** One request; answers the response, or throws with InfluxDB's own words (its JSON "error"/"message"). */
function call(fetch: GuardedFetch, server: Server, method: string, path: string, init: { body?: string; contentType?: string; signal?: AbortSignal }) {
  const route = path.split("?")[0];
  const origin = new URL(server.base).origin;
  return httpFetch(fetch, `${server.base}${path}`, {
    service: "InfluxDB",
    method,
    label: `${method} ${route}`,
    headers: {
      ...(server.authorization ? { authorization: server.authorization } : {}),
      ...(init.contentType ? { "content-type": init.contentType } : {}),
      accept: path.startsWith("/api/v2/query") ? "application/csv" : "application/json",
    },
    body: init.body,
    signal: init.signal,
    explain: (refusal) => {
      const { status, reason } = refusal;
      if (status === 401 || status === 403)
        return `InfluxDB refused the credentials (${status}${reason ? `: ${reason}` : ""}); check the connection's ${server.version === "2" ? "token" : "user and password"}`;
      // A 404 without InfluxDB's JSON is a server without the endpoint (1.x before 1.8); with it, InfluxDB names what it did not find.
      const explained = typeof refusal.body === "object" && refusal.body !== null;
      if (status === 404 && !explained && route.startsWith("/api/v2/"))
        return `InfluxDB at ${origin} has no ${route} (404): ${route === "/api/v2/query" ? "Flux needs InfluxDB 2.x, or 1.7+ with flux-enabled = true in [http]" : "the 2.x write endpoint needs InfluxDB 2.x or 1.8+"}; on an older 1.x server use a 1.x connection and InfluxQL`;
      return undefined;
    },
  });
}

// ---------- points ----------

interface PointInput {
  measurement?: unknown;
  tags?: unknown;
  fields?: unknown;
  time?: unknown;
}

/** A time as the line protocol wants it: a date (ISO text or Date), or a whole number already in `precision` units. */
function timeOf(value: unknown): Date | string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "number" || (typeof value === "string" && /^-?\d+$/.test(value.trim()))) {
    const text = String(value).trim();
    if (!/^-?\d+$/.test(text)) throw new Error(`time ${text} must be a whole number of the precision's units, or a date such as 2026-11-29T08:00:00Z`);
    return text;
  }
  const date = new Date(String(value));
  if (Number.isNaN(date.getTime())) throw new Error(`time "${value}" is neither a date (2026-11-29T08:00:00Z) nor a whole number of the precision's units`);
  return date;
}

/** Line protocol for the points, through the client's Point (escaping, field types, time in `precision`). */
export async function lineProtocol(points: PointInput[], precision: Precision, integerFields: Set<string>): Promise<string[]> {
  const { Point, dateToProtocolTimestamp } = await influx();
  const convertTime = (value: string | number | Date | undefined) =>
    // No time: none on the line, so the server stamps the point when it receives it.
    value instanceof Date ? dateToProtocolTimestamp[precision](value) : value === undefined || value === "" ? undefined : String(value);
  return points.map((input, i) => {
    const where = points.length > 1 ? ` (point ${i + 1})` : "";
    const measurement = String(input.measurement ?? "").trim();
    if (!measurement) throw new Error(`measurement is required${where}, e.g. temperature`);
    const point = new Point(measurement);
    for (const [name, value] of Object.entries(jsonObjectOf(input.tags, `tags${where}`, '{"room": "kitchen"}'))) {
      if (value === undefined || value === null || String(value) === "") continue;
      point.tag(name, String(value));
    }
    const fields = jsonObjectOf(input.fields, `fields${where}`, '{"value": 21.5}');
    for (const [name, value] of Object.entries(fields)) {
      if (value === undefined || value === null) continue;
      try {
        if (typeof value === "boolean") point.booleanField(name, value);
        else if (typeof value === "number" && integerFields.has(name)) point.intField(name, value);
        else if (typeof value === "number") point.floatField(name, value);
        else if (typeof value === "string") point.stringField(name, value);
        else point.stringField(name, JSON.stringify(value));
      } catch (error) {
        throw new Error(`field ${name}${where}: ${(error as Error).message}`);
      }
    }
    if (!Object.keys(point.fields).length) throw new Error(`a point needs at least one field${where}, e.g. {"value": 21.5}; tags alone are not stored`);
    point.timestamp(timeOf(input.time));
    return point.toLineProtocol({ convertTime }) as string;
  });
}

// ---------- queries ----------

interface InfluxQlAnswer {
  results?: Array<{
    statement_id?: number;
    error?: string;
    series?: Array<{ name?: string; tags?: Record<string, string>; columns: string[]; values?: unknown[][] }>;
  }>;
  error?: string;
}

/** InfluxQL's JSON as rows: one object per value row, with the series' name and tags. */
function influxQlRows(answer: InfluxQlAnswer) {
  if (answer.error) throw new Error(`InfluxDB: ${answer.error}`);
  const rows: Record<string, unknown>[] = [];
  const series: unknown[] = [];
  for (const result of answer.results ?? []) {
    if (result.error) throw new Error(`InfluxDB: ${result.error}`);
    for (const s of result.series ?? []) {
      series.push(s);
      for (const values of s.values ?? [])
        rows.push({ _measurement: s.name ?? null, ...(s.tags ?? {}), ...Object.fromEntries(s.columns.map((c, i) => [c, values[i] ?? null])) });
    }
  }
  return { rows, series };
}

/** A response body as lines, for the client's CSV reader. */
async function* bodyChunks(response: Response): AsyncIterableIterator<Uint8Array> {
  if (!response.body) return;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) yield chunk;
}

/** A Flux answer (annotated CSV) as rows, through the client's reader; at most `limit` rows are kept. */
async function fluxRows(response: Response, limit: number) {
  const { chunksToLinesIterable, linesToRowsIterable } = await influx();
  const rows: Record<string, unknown>[] = [];
  let truncated = false;
  for await (const row of linesToRowsIterable(chunksToLinesIterable(bodyChunks(response)))) {
    if (rows.length >= limit) {
      truncated = true;
      continue;
    }
    const object = row.tableMeta.toObject(row.values) as Record<string, unknown>;
    if (typeof object.error === "string" && object.error) throw new Error(`InfluxDB: ${object.error}`);
    rows.push(object);
  }
  return { rows, truncated };
}

const MAX_ROWS = 10_000;

const connectionProps = {
  url: Property.shortText({ displayName: "URL", required: true, description: "e.g. http://192.168.1.30:8086" }),
  version: Property.staticDropdown({
    displayName: "Version",
    required: true,
    default: "1",
    options: labelled({ "1": "InfluxDB 1.x (database, user and password)", "2": "InfluxDB 2.x (organisation, bucket and token)" }),
  }),
  database: Property.shortText({
    displayName: "Database (1.x)",
    description: "e.g. homelab; with a retention policy: homelab/autogen is not accepted, use the database name",
  }),
  username: Property.shortText({ displayName: "User (1.x)", description: "empty when the server has authentication off" }),
  password: Property.secretText({ displayName: "Password (1.x)" }),
  org: Property.shortText({ displayName: "Organisation (2.x)", description: "its name or id" }),
  bucket: Property.shortText({ displayName: "Bucket (2.x)", description: "e.g. homelab" }),
  token: Property.secretText({
    displayName: "API token (2.x)",
    description: "InfluxDB → Load Data → API Tokens; a token with write or read access to the bucket",
  }),
};

const precisionProp = () =>
  Property.staticDropdown({
    displayName: "Precision",
    default: "ms",
    description: "the unit of the points' times",
    options: labelled({ ns: "nanoseconds", us: "microseconds", ms: "milliseconds", s: "seconds" }),
  });

function precisionOf(value: unknown): Precision {
  const text = String(value ?? "ms");
  if (!(PRECISIONS as readonly string[]).includes(text)) throw new Error(`precision "${text}" is not one of ${PRECISIONS.join(", ")}`);
  return text as Precision;
}

function namesOf(value: unknown): Set<string> {
  const items = Array.isArray(value) ? value.map(String) : String(value ?? "").split(/[\s,]+/);
  return new Set(items.map((s) => s.trim()).filter(Boolean));
}

export default definePiece({
  id: "influxdb",
  name: "InfluxDB",
  version: "1.0.0",
  icon: "📈",
  description: "Write points to and query InfluxDB 1.x (InfluxQL) and 2.x (Flux)",
  auth: Auth.custom(connectionProps),
  checkConnection: connectionCheck(async ({ auth, fetch, signal }) => {
    const server = serverOf(auth);
    const response = await call(fetch, server, "GET", "/ping", { signal });
    const version = response.headers.get("x-influxdb-version");
    return `connected to InfluxDB${version ? ` ${version}` : ""}`;
  }),
  actions: [
    action({
      id: "write_points",
      name: "Write points",
      description: "Write one point (measurement, tags, fields, time) or a list of points",
      sideEffects: "write",
      props: {
        measurement: Property.shortText({ displayName: "Measurement", description: "e.g. temperature; not needed with Points" }),
        tags: Property.json({ displayName: "Tags", description: 'indexed text values, e.g. {"room": "kitchen"}' }),
        fields: Property.json({
          displayName: "Fields",
          description: 'the values, e.g. {"value": 21.5, "ok": true}; numbers are floats unless named in Integer fields',
        }),
        time: Property.shortText({
          displayName: "Time",
          description: "a date (2026-11-29T08:00:00Z) or a whole number in the precision's unit; empty: the server's time",
        }),
        points: Property.json({
          displayName: "Points",
          description: 'several points at once: [{"measurement": "power", "tags": {...}, "fields": {...}, "time": "..."}]',
        }),
        integer_fields: Property.shortText({
          displayName: "Integer fields",
          description: "field names written as integers (InfluxDB keeps a field's type), e.g. count, rssi",
        }),
        precision: precisionProp(),
        database: Property.shortText({ displayName: "Database (1.x)", description: "another database than the connection's" }),
        bucket: Property.shortText({ displayName: "Bucket (2.x)", description: "another bucket than the connection's" }),
      },
      sampleData: { written: 1, precision: "ms", target: "homelab", lines: ["temperature,room=kitchen value=21.5 1795939200000"] },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const server = serverOf(ctx.auth);
        const precision = precisionOf(c.precision);
        let list: PointInput[];
        if (c.points !== undefined && c.points !== null && c.points !== "") {
          const parsed = typeof c.points === "string" ? JSON.parse(c.points) : c.points;
          if (!Array.isArray(parsed) || !parsed.length)
            throw new Error('points must be a non-empty list, e.g. [{"measurement": "power", "fields": {"watts": 120}}]');
          list = parsed as PointInput[];
        } else list = [{ measurement: c.measurement, tags: c.tags, fields: c.fields, time: c.time }];
        const lines = await lineProtocol(list, precision, namesOf(c.integer_fields));
        const body = lines.join("\n");
        let target: string;
        if (server.version === "2") {
          target = String(c.bucket ?? "").trim() || server.bucket;
          if (!target) throw new Error("no bucket: set one in the connection or in the step");
          const query = new URLSearchParams({ org: server.org, bucket: target, precision });
          await call(ctx.fetch, server, "POST", `/api/v2/write?${query}`, { body, contentType: "text/plain; charset=utf-8", signal: ctx.signal });
        } else {
          target = String(c.database ?? "").trim() || server.database;
          if (!target) throw new Error("no database: set one in the connection or in the step");
          const query = new URLSearchParams({ db: target, precision });
          await call(ctx.fetch, server, "POST", `/write?${query}`, { body, contentType: "text/plain; charset=utf-8", signal: ctx.signal });
        }
        return { written: lines.length, precision, target, lines };
      },
    }),
    action({
      id: "query",
      name: "Query",
      description: "Run an InfluxQL or a Flux query and answer its rows",
      sideEffects: "read",
      props: {
        language: Property.staticDropdown({
          displayName: "Language",
          required: true,
          default: "influxql",
          options: labelled({ influxql: "InfluxQL (1.x; 2.x through its 1.x compatibility API)", flux: "Flux (2.x; 1.7+ with Flux enabled)" }),
        }),
        query: Property.longText({
          displayName: "Query",
          required: true,
          description: 'e.g. SELECT mean("value") FROM "temperature" WHERE time > now() - 1h GROUP BY "room"',
        }),
        database: Property.shortText({ displayName: "Database (InfluxQL)", description: "another database (or, on 2.x, mapped bucket) than the connection's" }),
      },
      sampleData: {
        language: "influxql",
        count: 1,
        rows: [{ _measurement: "temperature", room: "kitchen", time: "2026-11-29T08:00:00Z", mean: 21.5 }],
        truncated: false,
      },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const server = serverOf(ctx.auth);
        const text = String(c.query ?? "").trim();
        if (!text) throw new Error("query is empty; give an InfluxQL or Flux query");
        const language = String(c.language ?? "influxql");
        if (language === "flux") {
          const query = server.version === "2" ? `?${new URLSearchParams({ org: server.org })}` : "";
          const response = await call(ctx.fetch, server, "POST", `/api/v2/query${query}`, {
            body: JSON.stringify({ query: text, type: "flux", dialect: { header: true, annotations: ["datatype", "group", "default"], delimiter: "," } }),
            contentType: "application/json",
            signal: ctx.signal,
          });
          const { rows, truncated } = await fluxRows(response, MAX_ROWS);
          return { language, count: rows.length, rows, truncated };
        }
        if (language !== "influxql") throw new Error(`language "${language}" is not influxql or flux`);
        const db = String(c.database ?? "").trim() || (server.version === "2" ? server.bucket : server.database);
        const params = new URLSearchParams({ q: text, ...(db ? { db } : {}) });
        // POST: it carries every statement (SELECT, SHOW, and those that change the database).
        const response = await call(ctx.fetch, server, "POST", "/query", {
          body: params.toString(),
          contentType: "application/x-www-form-urlencoded",
          signal: ctx.signal,
        });
        const { rows, series } = influxQlRows((await response.json()) as InfluxQlAnswer);
        const truncated = rows.length > MAX_ROWS;
        return { language, count: Math.min(rows.length, MAX_ROWS), rows: rows.slice(0, MAX_ROWS), series: truncated ? undefined : series, truncated };
      },
    }),
  ],
});
