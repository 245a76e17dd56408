/**
 * Log streaming (docs/operations.md, "Log streaming"): run events (started, finished with status) and audit
 * events (tokens minted and revoked, logins, workflows published) go to syslog as RFC 5424 messages — received
 * by Debian's rsyslog on loopback over UDP and over TCP (octet-counted) — and to an HTTP endpoint as batched
 * JSON POSTs, retried with backoff; a full queue drops events, counted and logged. TLS syslog is tested against
 * a node:tls server on loopback with a certificate made by openssl for the test (rsyslog's TLS needs a
 * GnuTLS/OpenSSL driver configured with its own certificates; the framing is the TCP one either way).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import { loadConfig } from "../../src/config";
import { createLogStream } from "../../src/core/log-stream";
import { HttpDestination } from "../../src/core/log-stream/http-batch";
import { formatSyslog } from "../../src/core/log-stream/syslog";
import { createLogger } from "../../src/http/logger";
import { testApp, type TestApp } from "../support/app";
import { hasRsyslog, type RsyslogHandle, startRsyslog } from "../support/rsyslog";
import { testStepsPiece } from "../support/test-steps";
import { definition, webhookTrigger } from "../triggers/harness";

if (!hasRsyslog()) console.log("log streaming: syslog tests skipped (install the Debian package rsyslog)");
const hasOpenssl = Bun.which("openssl") !== null;
if (!hasOpenssl) console.log("log streaming: the TLS syslog test skipped (install the Debian package openssl)");

/** An HTTP endpoint on loopback: answers each POST with the next of `statuses` (then 200), records the batches it took. */
function startCollector(statuses: number[] = []) {
  const batches: Record<string, unknown>[][] = [];
  let calls = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as Record<string, unknown>[];
      const status = statuses[calls++] ?? 200;
      if (status === 200) batches.push(body);
      return new Response(status === 200 ? "" : "try later", { status, headers: { "x-auth-seen": request.headers.get("authorization") ?? "" } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/events`,
    batches,
    events: () => batches.flat(),
    calls: () => calls,
    stop: () => server.stop(true),
  };
}

const lines = () => {
  const out: string[] = [];
  return { out, log: createLogger("debug", (line) => out.push(line)) };
};

async function eventually<T>(check: () => T | Promise<T>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await Bun.sleep(25);
    }
  }
}

describe("the RFC 5424 message", () => {
  test("PRI from facility and severity, the header fields, the event as JSON", () => {
    const event = { type: "run.finished", time: "2026-11-29T16:00:00.123Z", severity: "warning" as const, runId: "r1", error: "boom" };
    const line = formatSyslog(event, 16, "web 1");
    expect(line).toBe(`<132>1 2026-11-29T16:00:00.123Z web1 weft ${process.pid} run.finished - ${JSON.stringify(event)}`);
    expect(formatSyslog({ ...event, severity: "info" }, 1, "")).toStartWith("<14>1 2026-11-29T16:00:00.123Z - weft ");
  });

  test("the variables: bad addresses and facilities stop the start, naming the variable", () => {
    const c = loadConfig({ WEFT_LOG_SYSLOG: "tcp://[::1]:6514", WEFT_LOG_SYSLOG_FACILITY: "local3", WEFT_LOG_HTTP_HEADERS: "authorization=Bearer%20abc" });
    expect(c.logStream.syslog).toEqual({ protocol: "tcp", host: "::1", port: 6514 });
    expect(c.logStream.syslogFacility).toBe(19);
    expect(c.logStream.httpHeaders).toEqual({ authorization: "Bearer abc" });
    expect(() => loadConfig({ WEFT_LOG_SYSLOG: "syslog.example:514" })).toThrow("WEFT_LOG_SYSLOG");
    expect(() => loadConfig({ WEFT_LOG_SYSLOG: "udp://host:99999" })).toThrow("WEFT_LOG_SYSLOG");
    expect(() => loadConfig({ WEFT_LOG_SYSLOG_FACILITY: "mail2" })).toThrow("WEFT_LOG_SYSLOG_FACILITY");
    expect(() => loadConfig({ WEFT_LOG_HTTP_URL: "ftp://x" })).toThrow("WEFT_LOG_HTTP_URL");
    expect(loadConfig({}).logStream).toMatchObject({ syslog: undefined, httpUrl: undefined, syslogFacility: 16, httpBatch: 100, queue: 10_000 });
  });
});

describe.skipIf(!hasRsyslog())("a server's run and audit events, to rsyslog over UDP and to an HTTP endpoint", () => {
  let rsyslog: RsyslogHandle;
  const collector = startCollector();
  let t: TestApp;

  beforeAll(async () => {
    rsyslog = await startRsyslog();
    t = await testApp({
      WEFT_LOG_SYSLOG: `udp://127.0.0.1:${rsyslog.udpPort}`,
      WEFT_LOG_SYSLOG_FACILITY: "local4",
      WEFT_LOG_HTTP_URL: collector.url,
      WEFT_LOG_HTTP_HEADERS: "authorization=Bearer%20sink-secret",
    });
    t.deps.pieces.register(testStepsPiece("ltest"));
  });
  afterAll(async () => {
    await t.deps.engine.stop(500);
    await t.deps.logStream.close();
    await rsyslog.stop();
    collector.stop();
  });

  test("runs started and finished, workflows published, tokens minted and revoked", async () => {
    const steps = { name: "explode", type: "PIECE", pieceId: "ltest", actionId: "boom", config: {} };
    const created = await t.req("POST", "/api/workflows", { body: { name: "streamed", definition: definition(webhookTrigger(), steps) } });
    expect(created.status).toBe(201);
    const workflowId = created.body.data.id as string;
    expect((await t.req("POST", `/api/workflows/${workflowId}/publish`)).status).toBe(200);
    const run = await t.req("POST", `/api/workflows/${workflowId}/run?environment=production&wait=10`, { body: {} });
    expect(run.body.data.status).toBe("failed");
    const token = await t.req("POST", "/api/tokens", { body: { name: "ci bot", scopes: ["workflow:read"] } });
    expect(token.status).toBe(201);
    expect((await t.req("DELETE", `/api/tokens/${token.body.data.id}`)).status).toBe(200);
    await t.deps.logStream.flush();

    // All six sent, the last (the token's revocation) included: workflow.created and .published, run.started
    // and .finished, token.created and .revoked. Waiting for five raced the last one under load.
    const received = await rsyslog.messages(6);
    const byType = (type: string) => received.filter((m) => m.msgId === type).map((m) => ({ ...m, event: JSON.parse(m.msg) }));
    const finished = byType("run.finished").find((m) => m.event.runId === run.body.data.id)!;
    expect(finished).toBeDefined();
    // local4 (20) × 8 + warning (4): a failed run is a warning.
    expect(finished.pri).toBe(164);
    expect(finished).toMatchObject({ version: "1", appName: "weft", procId: String(process.pid), structuredData: "-" });
    expect(finished.event).toMatchObject({ type: "run.finished", status: "failed", workflowId, workflowName: "streamed", version: 1, triggerType: "api" });
    expect(finished.event.error).toContain("boom: upstream said no");
    const started = byType("run.started").find((m) => m.event.runId === run.body.data.id)!;
    expect(started.pri).toBe(166);
    expect(byType("workflow.published")[0]!.event).toMatchObject({ workflowId, version: 1 });
    expect(byType("token.created")[0]!.event).toMatchObject({ tokenId: token.body.data.id, name: "ci bot", scopes: ["workflow:read"] });
    expect(byType("token.created")[0]!.pri).toBe(165);
    expect(byType("token.revoked")[0]!.event).toMatchObject({ tokenId: token.body.data.id });

    // The same events reached the HTTP endpoint, in order, as JSON arrays.
    const posted = collector.events();
    const types = posted.map((e) => e.type);
    for (const type of ["workflow.published", "run.started", "run.finished", "token.created", "token.revoked"]) expect(types).toContain(type);
    expect(types.indexOf("token.created")).toBeLessThan(types.indexOf("token.revoked"));
    expect(posted.find((e) => e.type === "run.finished" && e.runId === run.body.data.id)).toMatchObject({ status: "failed", severity: "warning" });
    expect(t.deps.logStream.stats[`http http://127.0.0.1:${new URL(collector.url).port}`]).toMatchObject({ dropped: 0, queued: 0 });
    const metrics = await t.req("GET", "/metrics");
    expect(metrics.text).toContain(`weft_log_stream_dropped_total{destination="http http://127.0.0.1:${new URL(collector.url).port}"} 0`);
    expect(metrics.text).toContain(`weft_log_stream_dropped_total{destination="syslog udp://127.0.0.1:${rsyslog.udpPort}"} 0`);
  });
});

describe("dropped events on /metrics", () => {
  test("weft_log_stream_dropped_total counts, per destination, what a destination gave up", async () => {
    const collector = startCollector([400]);
    const t = await testApp({ WEFT_LOG_HTTP_URL: collector.url });
    try {
      expect((await t.req("POST", "/api/tokens", { body: { name: "refused", scopes: ["workflow:read"] } })).status).toBe(201);
      await t.deps.logStream.flush();
      const metrics = await t.req("GET", "/metrics");
      expect(metrics.text).toContain(`weft_log_stream_dropped_total{destination="http http://127.0.0.1:${new URL(collector.url).port}"} 1`);
      expect(t.logLines.some((line) => line.includes("log streaming dropped events") && line.includes("400"))).toBe(true);
    } finally {
      await t.deps.engine.stop(500);
      await t.deps.logStream.close(0);
      collector.stop();
    }
  });
});

describe.skipIf(!hasRsyslog())("syslog over TCP to rsyslog", () => {
  test("octet-counted frames arrive as separate messages, whatever they hold", async () => {
    const rsyslog = await startRsyslog();
    try {
      const stream = createLogStream(loadConfig({ WEFT_LOG_SYSLOG: `tcp://127.0.0.1:${rsyslog.tcpPort}` }).logStream, {
        log: lines().log,
        hostname: "weft-test-host",
      });
      const texts = ["one line", "two\nlines", "trailing space ", "ünïcödé ✓"];
      for (const [i, text] of texts.entries()) stream.emit("audit.test", { n: i, text }, i === 0 ? "error" : "info");
      await stream.flush();
      const received = await rsyslog.messages(texts.length);
      expect(received.map((m) => JSON.parse(m.msg))).toMatchObject(texts.map((text, n) => ({ type: "audit.test", n, text })));
      expect(received[0]).toMatchObject({ pri: 131, hostname: "weft-test-host", msgId: "audit.test" });
      await stream.close();
    } finally {
      await rsyslog.stop();
    }
  });

  test("a server that goes away and comes back: events wait, the connection is opened again, they arrive", async () => {
    const first = await startRsyslog();
    const { out, log } = lines();
    const stream = createLogStream(loadConfig({ WEFT_LOG_SYSLOG: `tcp://127.0.0.1:${first.tcpPort}` }).logStream, { log });
    let second: RsyslogHandle | undefined;
    try {
      stream.emit("audit.test", { n: 1 });
      await stream.flush();
      expect((await first.messages(1)).map((m) => JSON.parse(m.msg).n)).toEqual([1]);
      await first.stop();
      // The server closed the connection; the next event finds nobody listening and waits in the queue.
      await eventually(() => expect(stream.stats[`syslog tcp://127.0.0.1:${first.tcpPort}`]).toMatchObject({ sent: 1, connected: false }));
      stream.emit("audit.test", { n: 2 });
      await eventually(() => expect(out.some((l) => l.includes("syslog connection failed"))).toBe(true));
      expect(stream.stats[`syslog tcp://127.0.0.1:${first.tcpPort}`]).toMatchObject({ queued: 1, dropped: 0 });
      second = await startRsyslog({ tcpPort: first.tcpPort });
      expect((await second.messages(1)).map((m) => JSON.parse(m.msg).n)).toEqual([2]);
    } finally {
      await stream.close();
      await second?.stop();
    }
  });
});

describe.skipIf(!hasOpenssl)("syslog over TLS (a node:tls server on loopback)", () => {
  test("the server's certificate is verified against WEFT_LOG_SYSLOG_CA, frames are octet-counted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    let received = Buffer.alloc(0);
    const server = createTlsServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (socket) => {
      socket.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const config = loadConfig({ WEFT_LOG_SYSLOG: `tls://127.0.0.1:${port}`, WEFT_LOG_SYSLOG_CA: join(dir, "cert.pem") }).logStream;
      const stream = createLogStream(config, { log: lines().log });
      stream.emit("token.created", { tokenId: "t1" }, "notice");
      stream.emit("token.revoked", { tokenId: "t1" }, "notice");
      await stream.flush();
      const frames = await eventually(() => {
        const parsed = parseOctetCounted(received);
        expect(parsed.length).toBe(2);
        return parsed;
      });
      expect(frames[0]).toMatch(/^<133>1 \S+ \S+ weft \d+ token\.created - \{/);
      expect(JSON.parse(frames[1]!.slice(frames[1]!.indexOf("{")))).toMatchObject({ type: "token.revoked", tokenId: "t1" });
      await stream.close();

      // Without the CA the self-signed certificate is refused: nothing is delivered, the log says why.
      received = Buffer.alloc(0);
      const { out, log } = lines();
      const untrusted = createLogStream(loadConfig({ WEFT_LOG_SYSLOG: `tls://127.0.0.1:${port}` }).logStream, { log });
      untrusted.emit("token.created", { tokenId: "t2" });
      await eventually(() => expect(out.some((l) => l.includes("syslog connection failed") && /certificate/i.test(l))).toBe(true));
      expect(received.length).toBe(0);
      await untrusted.close(0);
      expect(Object.values(untrusted.stats)[0]).toMatchObject({ sent: 0, dropped: 1, queued: 0 });
    } finally {
      server.close();
    }
  });
});

/** RFC 6587 octet counting: `LENGTH SP MESSAGE`, repeated. */
function parseOctetCounted(bytes: Buffer): string[] {
  const frames: string[] = [];
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number(bytes.subarray(at, space).toString());
    if (space + 1 + length > bytes.length) break;
    frames.push(bytes.subarray(space + 1, space + 1 + length).toString());
    at = space + 1 + length;
  }
  return frames;
}

describe("the HTTP endpoint", () => {
  const event = (n: number) => ({ type: "audit.test", time: new Date().toISOString(), severity: "info" as const, n });

  test("batches of at most WEFT_LOG_HTTP_BATCH events, in order, retried after 503 and 429 until taken", async () => {
    const collector = startCollector([503, 429]);
    const { out, log } = lines();
    const http = new HttpDestination({ url: collector.url, headers: { authorization: "Bearer x" }, batch: 3, queue: 100, log, retryDelayMs: () => 20 });
    try {
      for (let n = 1; n <= 7; n++) http.send(event(n));
      await http.flush();
      expect(collector.batches.map((b) => b.map((e) => e.n))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
      expect(collector.calls()).toBe(5);
      expect(http.stats).toEqual({ sent: 7, dropped: 0, queued: 0 });
      expect(out.some((l) => l.includes("a batch is retried") && l.includes("503"))).toBe(true);
    } finally {
      collector.stop();
    }
  });

  test("a batch the endpoint refuses (400) is dropped and counted; the next one goes on", async () => {
    const collector = startCollector([400]);
    const { out, log } = lines();
    const http = new HttpDestination({ url: collector.url, headers: {}, batch: 2, queue: 100, log, retryDelayMs: () => 20 });
    try {
      for (let n = 1; n <= 4; n++) http.send(event(n));
      await http.flush();
      expect(collector.events().map((e) => e.n)).toEqual([3, 4]);
      expect(http.stats).toEqual({ sent: 2, dropped: 2, queued: 0 });
      expect(out.some((l) => l.includes("log streaming dropped events") && l.includes("400"))).toBe(true);
    } finally {
      collector.stop();
    }
  });

  test("a full queue drops new events, counted and logged; the queued ones are delivered once the endpoint is back", async () => {
    const collector = startCollector([503, 503, 503]);
    const { out, log } = lines();
    const http = new HttpDestination({ url: collector.url, headers: {}, batch: 2, queue: 4, log, retryDelayMs: () => 50 });
    try {
      for (let n = 1; n <= 7; n++) http.send(event(n));
      expect(http.stats.dropped).toBe(3);
      expect(out.filter((l) => l.includes("log streaming dropped events")).length).toBe(1);
      expect(JSON.parse(out.find((l) => l.includes("log streaming dropped events"))!)).toMatchObject({ dropped: 1, droppedTotal: 1 });
      await http.flush();
      expect(collector.events().map((e) => e.n)).toEqual([1, 2, 3, 4]);
      expect(http.stats).toEqual({ sent: 4, dropped: 3, queued: 0 });
    } finally {
      collector.stop();
    }
  });
});
