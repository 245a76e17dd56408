/**
 * The influxdb piece. InfluxDB 1.x is real: Debian's `influxdb` (influxd, test/support/influxdb.ts) on a
 * loopback port with authentication on; skipped with one line when it is missing. Debian ships 1.6, which
 * answers neither the 2.x write endpoint nor Flux, so the 2.x path (token, org, bucket; /api/v2/write and
 * Flux on /api/v2/query) runs against a loopback fixture below that follows InfluxDB 2.x's documented HTTP
 * API (docs.influxdata.com "Write data with the InfluxDB API", "Query with the InfluxDB API": Token
 * authorization, org/bucket/precision parameters, 204 on a write, annotated CSV for a query).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createGuardedFetch } from "../../src/net/guarded-fetch";
import { builtinRegistry } from "../../src/pieces-runtime/registry";
import type { ResolvedAuth } from "../../src/pieces-sdk/types";
import { hasInfluxd, type InfluxdHandle, startInfluxd } from "../support/influxdb";
import { fakeContext, loopback } from "./fake-context";

const piece = builtinRegistry().get("influxdb")!;
const allowed = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"] });

const run = async (actionId: string, config: Record<string, unknown>, auth: ResolvedAuth, fetch = allowed) => {
  const ctx = fakeContext(config, { auth });
  ctx.fetch = fetch;
  return (await piece.actions[actionId]!.run(ctx)) as any;
};
const check = (auth: ResolvedAuth, fetch = allowed) => piece.checkConnection!({ auth, fetch, signal: new AbortController().signal });

if (!hasInfluxd()) console.log("influxdb piece: InfluxDB 1.x tests skipped (install the Debian package influxdb)");

describe.skipIf(!hasInfluxd())("influxdb 1.x against a real influxd", () => {
  let influx: InfluxdHandle;
  let auth: ResolvedAuth;
  beforeAll(async () => {
    influx = await startInfluxd();
    await influx.influxql("CREATE DATABASE homelab");
    await influx.influxql("CREATE DATABASE other");
    auth = { kind: "custom", values: { url: influx.url, version: "1", database: "homelab", username: influx.user, password: influx.password } };
  }, 30_000);
  afterAll(() => influx?.stop());

  test("write_points builds escaped line protocol with tags, typed fields and a time in the precision; query reads it back with InfluxQL", async () => {
    const out = await run(
      "write_points",
      {
        measurement: "room climate",
        tags: { room: "living room", floor: "1,2" },
        fields: { temperature: 21.5, humidity: 40, ok: true, note: 'said "hi"', rssi: -61 },
        integer_fields: "rssi",
        time: "2026-11-29T08:00:00Z",
        precision: "s",
      },
      auth,
    );
    expect(out).toEqual({
      written: 1,
      precision: "s",
      target: "homelab",
      lines: ['room\\ climate,floor=1\\,2,room=living\\ room humidity=40,note="said \\"hi\\"",ok=T,rssi=-61i,temperature=21.5 1795939200'],
    });
    const read = await run("query", { language: "influxql", query: 'SELECT * FROM "room climate"' }, auth);
    expect(read.count).toBe(1);
    expect(read.rows[0]).toEqual({
      _measurement: "room climate",
      time: "2026-11-29T08:00:00Z",
      floor: "1,2",
      room: "living room",
      humidity: 40,
      note: 'said "hi"',
      ok: true,
      rssi: -61,
      temperature: 21.5,
    });
    // The server kept the field types the piece wrote: rssi an integer, the other numbers floats.
    const keys = await run("query", { language: "influxql", query: 'SHOW FIELD KEYS FROM "room climate"' }, auth);
    expect(Object.fromEntries(keys.rows.map((r: any) => [r.fieldKey, r.fieldType]))).toEqual({
      humidity: "float",
      note: "string",
      ok: "boolean",
      rssi: "integer",
      temperature: "float",
    });
  });

  test("a list of points with whole-number times in ms goes to the step's database; GROUP BY tags come back per row", async () => {
    const points = [
      { measurement: "power", tags: { plug: "desk" }, fields: { watts: 120 }, time: 1795939200000 },
      { measurement: "power", tags: { plug: "desk" }, fields: { watts: 80 }, time: "1795939260000" },
      { measurement: "power", tags: { plug: "fridge" }, fields: { watts: 60 }, time: new Date(1795939200000).toISOString() },
    ];
    const out = await run("write_points", { points, precision: "ms", database: "other" }, auth);
    expect(out).toMatchObject({ written: 3, target: "other" });
    expect(out.lines[2]).toBe("power,plug=fridge watts=60 1795939200000");
    const read = await run("query", { language: "influxql", query: 'SELECT sum("watts") FROM "power" GROUP BY "plug"', database: "other" }, auth);
    expect(read.rows.map((r: any) => [r.plug, r.sum])).toEqual([
      ["desk", 200],
      ["fridge", 60],
    ]);
    expect((await influx.influxql('SELECT count("watts") FROM "power"', "homelab")).results[0].series).toBeUndefined();
  });

  test("InfluxDB's refusals read as its words: a wrong password, a bad query, Flux on a server without it", async () => {
    const wrong: ResolvedAuth = { kind: "custom", values: { ...(auth as any).values, password: "nope" } };
    await expect(run("query", { query: "SHOW DATABASES" }, wrong)).rejects.toThrow(
      "InfluxDB refused the credentials (401: authorization failed); check the connection's user and password",
    );
    await expect(run("write_points", { measurement: "m", fields: { v: 1 } }, wrong)).rejects.toThrow("InfluxDB refused the credentials");
    await expect(run("query", { query: "SELEC nothing" }, auth)).rejects.toThrow(/InfluxDB answered 400 to POST \/query: error parsing query/);
    await expect(run("query", { query: "SELECT * FROM nowhere", database: "missing" }, auth)).rejects.toThrow("database not found: missing");
    await expect(run("query", { language: "flux", query: 'from(bucket: "homelab")' }, auth)).rejects.toThrow(
      /has no \/api\/v2\/query \(404\): Flux needs InfluxDB 2\.x, or 1\.7\+ with flux-enabled = true/,
    );
    await expect(run("write_points", { measurement: "m", fields: { v: 1 }, time: "yesterday" }, auth)).rejects.toThrow('time "yesterday" is neither a date');
    await expect(run("write_points", { measurement: "m", tags: { a: "b" } }, auth)).rejects.toThrow("a point needs at least one field");
    await expect(run("write_points", { measurement: "m", fields: { v: 1 }, precision: "h" }, auth)).rejects.toThrow(
      'precision "h" is not one of ns, us, ms, s',
    );
    expect(await check(auth)).toEqual({ ok: true, message: `connected to InfluxDB ${influx.version}` });
  });

  test("a loopback or LAN server needs an allowed range (the SSRF guard)", async () => {
    const guarded = createGuardedFetch();
    await expect(run("write_points", { measurement: "m", fields: { v: 1 } }, auth, guarded)).rejects.toThrow(/127\.0\.0\.1.*WEFT_ALLOW_CIDRS/);
    const checked = await check(auth, guarded);
    expect(checked.ok).toBe(false);
    expect(checked.message).toContain("WEFT_ALLOW_CIDRS");
  });
});

/** InfluxDB 2.x's HTTP API as documented: the write and the Flux query of one org; a token is required. */
function influx2Fixture() {
  const token = "influx2-token";
  const writes: Array<{ org: string; bucket: string; precision: string; body: string }> = [];
  const queries: Array<{ org: string; body: any }> = [];
  const server = loopback(async (req, body) => {
    const url = new URL(req.url);
    if (req.headers.get("authorization") !== `Token ${token}`) return Response.json({ code: "unauthorized", message: "unauthorized access" }, { status: 401 });
    const org = url.searchParams.get("org") ?? "";
    if (org !== "home") return Response.json({ code: "not found", message: `organization name "${org}" not found` }, { status: 404 });
    if (req.method === "POST" && url.pathname === "/api/v2/write") {
      writes.push({ org, bucket: url.searchParams.get("bucket") ?? "", precision: url.searchParams.get("precision") ?? "ns", body });
      return new Response(null, { status: 204 });
    }
    if (req.method === "POST" && url.pathname === "/api/v2/query") {
      queries.push({ org, body: JSON.parse(body) });
      // The documented annotated CSV: #datatype, #group and #default rows, then the header and the records.
      const csv = [
        "#datatype,string,long,dateTime:RFC3339,dateTime:RFC3339,dateTime:RFC3339,double,string,string,string",
        "#group,false,false,true,true,false,false,true,true,true",
        "#default,_result,,,,,,,,",
        ",result,table,_start,_stop,_time,_value,_field,_measurement,room",
        ",,0,2026-11-29T07:00:00Z,2026-11-29T09:00:00Z,2026-11-29T08:00:00Z,21.5,temperature,climate,kitchen",
        ",,0,2026-11-29T07:00:00Z,2026-11-29T09:00:00Z,2026-11-29T08:05:00Z,21.75,temperature,climate,kitchen",
        "",
      ].join("\r\n");
      return new Response(csv, { headers: { "content-type": "text/csv; charset=utf-8" } });
    }
    return Response.json({ code: "not found", message: "path not found" }, { status: 404 });
  });
  return { ...server, token, writes, queries };
}

describe("influxdb 2.x against a loopback fixture of InfluxDB 2.x's documented API", () => {
  const fixture = influx2Fixture();
  const auth: ResolvedAuth = { kind: "custom", values: { url: fixture.url, version: "2", org: "home", bucket: "sensors", token: fixture.token } };
  afterAll(() => fixture.stop());

  test("write_points posts line protocol to /api/v2/write with org, bucket, precision and the token", async () => {
    const out = await run(
      "write_points",
      { measurement: "climate", tags: { room: "kitchen" }, fields: { temperature: 21.5 }, time: "2026-11-29T08:00:00.123Z", precision: "us" },
      auth,
    );
    expect(out).toEqual({ written: 1, precision: "us", target: "sensors", lines: ["climate,room=kitchen temperature=21.5 1795939200123000"] });
    expect(fixture.writes.at(-1)).toEqual({ org: "home", bucket: "sensors", precision: "us", body: "climate,room=kitchen temperature=21.5 1795939200123000" });
    expect(fixture.requests.at(-1)!.headers.get("authorization")).toBe(`Token ${fixture.token}`);
    await run("write_points", { measurement: "climate", fields: { temperature: 20 }, bucket: "archive" }, auth);
    expect(fixture.writes.at(-1)).toMatchObject({ bucket: "archive", precision: "ms", body: "climate temperature=20" });
  });

  test("a Flux query goes to /api/v2/query with the org and the annotated-CSV dialect; its rows come back typed", async () => {
    const flux = 'from(bucket: "sensors") |> range(start: -2h) |> filter(fn: (r) => r._measurement == "climate")';
    const out = await run("query", { language: "flux", query: flux }, auth);
    expect(fixture.queries.at(-1)).toEqual({
      org: "home",
      body: { query: flux, type: "flux", dialect: { header: true, annotations: ["datatype", "group", "default"], delimiter: "," } },
    });
    expect(out.count).toBe(2);
    expect(out.rows.map((r: any) => [r._time, r._value, r.room])).toEqual([
      ["2026-11-29T08:00:00Z", 21.5, "kitchen"],
      ["2026-11-29T08:05:00Z", 21.75, "kitchen"],
    ]);
    expect(out.rows[0].result).toBe("_result");
  });

  test("a wrong token or org reads as InfluxDB's answer", async () => {
    const wrong: ResolvedAuth = { kind: "custom", values: { ...(auth as any).values, token: "nope" } };
    await expect(run("write_points", { measurement: "m", fields: { v: 1 } }, wrong)).rejects.toThrow(
      "InfluxDB refused the credentials (401: unauthorized access); check the connection's token",
    );
    const otherOrg: ResolvedAuth = { kind: "custom", values: { ...(auth as any).values, org: "work" } };
    await expect(run("query", { language: "flux", query: "buckets()" }, otherOrg)).rejects.toThrow('organization name "work" not found');
    await expect(run("query", { query: "x" }, { kind: "custom", values: { url: fixture.url, version: "2", org: "home" } })).rejects.toThrow(
      "needs an API token",
    );
  });
});
