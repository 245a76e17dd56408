/**
 * Large answers (docs/scaling.md, "Large answers"): Bun writes an answer made after an `await` whose head and body
 * pass its 16 KiB cork buffer in one send() per piece of the head; Weft gives a body past 14 KiB to Bun as a
 * stream of one chunk instead (src/http/answer-body.ts). Two parts, in one sitting:
 *
 * - Bun alone: a server in this process answers a body of 20, 45 and 100 KB after an `await`, as text and as
 *   answerBody() gives it, measured in turns (wrk, 20 connections, the median of --repeat phases each).
 * - Weft: one `weft serve` with 60 workflows and 30 small runs answers a run-list page (~20 KB, made as text by a
 *   reader thread), the workflow list (~43 KB, an object the app serialises) and a webhook's synchronous reply
 *   (~20 KB); req/s of each, and, with strace installed (Debian package strace), the send() and sendmsg() calls
 *   the instance made for 100 answers of each one after another. Goal: at most 2 sends an answer.
 *
 *   bun bench/large-answers.ts [--seconds 3] [--repeat 3]
 */
import { readFileSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { answerBody } from "../src/http/answer-body";
import { BENCH_TOKEN, benchApi, load, machine, publishWebhookWorkflow, ROOT, reportGoal, startBenchServer } from "./_support";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { seconds: { type: "string", default: "3" }, repeat: { type: "string", default: "3" } },
});
const SECONDS = Number(values.seconds);
const REPEAT = Math.max(1, Number(values.repeat));
const CONNECTIONS = 20;
const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const f = (n: number) => n.toFixed(0).padStart(7);

console.log(`machine: ${machine()}; Bun ${Bun.version}; ${CONNECTIONS} connections, ${REPEAT} × ${SECONDS} s per figure (the median), in turns`);

// ------------------------------------------------------------------------------------------ Bun alone

console.log("\n--- Bun alone: a body answered after an await, as text and as a stream of one chunk ---");
const later = () => new Promise((resolve) => setImmediate(resolve));
const sizes = [20_000, 45_000, 100_000];
const texts = new Map(sizes.map((size) => [size, `{"x":"${"x".repeat(size - 8)}"}`]));
const toy = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const text = texts.get(Number(url.searchParams.get("size")))!;
    await later();
    const body = url.pathname === "/stream" ? answerBody(text) : text;
    return new Response(body, { headers: { "content-type": "application/json", "x-request-id": "bench" } });
  },
});
for (const size of sizes) {
  const rates: Record<"text" | "stream", number[]> = { text: [], stream: [] };
  for (let i = 0; i < REPEAT; i++) {
    for (const kind of i % 2 === 0 ? (["text", "stream"] as const) : (["stream", "text"] as const)) {
      rates[kind].push((await load(`http://127.0.0.1:${toy.port}/${kind}?size=${size}`, { connections: CONNECTIONS, seconds: SECONDS })).requestsPerSecond);
    }
  }
  console.log(
    `${String(size / 1000).padStart(4)} KB  as text ${f(median(rates.text))} req/s   as a stream ${f(median(rates.stream))} req/s   ×${(median(rates.stream) / median(rates.text)).toFixed(2)}`,
  );
}
toy.stop(true);

// ------------------------------------------------------------------------------------------ Weft

console.log("\n--- Weft: large answers of `weft serve` ---");
const server = await startBenchServer([process.execPath, `${ROOT}/src/main.ts`, "serve"], { WEFT_RUN_RETENTION_DAYS: "0", WEFT_RUN_RETENTION_MAX: "0" });
try {
  const api = benchApi(server.url);
  const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
  const echo = { name: "reply", type: "PIECE", pieceId: "webhook", actionId: "respond", config: { status: 200, body: "{{trigger.body}}" } };
  for (let i = 0; i < 60; i++)
    await api("POST", "/api/workflows", {
      name: `workflow ${i}: a name as long as a team writes them, with a word or two more`,
      definition: {
        schemaVersion: 2,
        trigger: { name: "trigger", type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} },
        settings: {},
        variables: {},
        annotations: null,
        pinnedData: {},
      },
    });
  const small = await publishWebhookWorkflow(server.url, "small runs", echo);
  for (let i = 0; i < 30; i++)
    await fetch(small.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Ada", n: i }) });
  const reply = await publishWebhookWorkflow(server.url, "large reply", echo);
  const large = JSON.stringify({ items: Array.from({ length: 500 }, (_, i) => ({ i, name: `item ${i}`, note: "a line of text" })) });
  const cases = [
    { name: "run-list page (reader thread's text)", url: `${server.url}/api/runs?workflowId=${small.id}&limit=20`, init: { headers: auth } },
    { name: "workflow list (an object)", url: `${server.url}/api/workflows?limit=60`, init: { headers: auth } },
    { name: "webhook reply (server route)", url: reply.url, init: { method: "POST", headers: { "content-type": "application/json" }, body: large } },
  ];
  const strace = Bun.which("strace");
  if (!strace) console.log("(send() counts skipped: strace is not installed, Debian package strace)");
  for (const c of cases) {
    const sample = await fetch(c.url, c.init);
    const bytes = (await sample.arrayBuffer()).byteLength;
    const rates: number[] = [];
    for (let i = 0; i < REPEAT; i++) rates.push((await load(c.url, { connections: CONNECTIONS, seconds: SECONDS, ...c.init })).requestsPerSecond);
    let sends = "-";
    if (strace) {
      const out = `${server.dataDir}/strace-${Date.now()}.txt`;
      const tracer = Bun.spawn([strace, "-f", "-e", "trace=sendto,sendmsg,writev", "-o", out, "-p", String(server.proc.pid)], { stderr: "ignore" });
      await Bun.sleep(500);
      const ANSWERS = 100;
      for (let i = 0; i < ANSWERS; i++) await (await fetch(c.url, c.init)).arrayBuffer();
      await Bun.sleep(200);
      tracer.kill("SIGINT");
      await tracer.exited;
      const calls = readFileSync(out, "utf8")
        .split("\n")
        .filter((line) => /\b(sendto|sendmsg|writev)\(/.test(line)).length;
      rmSync(out, { force: true });
      const perAnswer = calls / ANSWERS;
      sends = perAnswer.toFixed(2);
      reportGoal({ figure: `sends an answer, ${c.name}, ${(bytes / 1024).toFixed(0)} KiB`, value: sends, goal: "≤ 2", met: perAnswer <= 2 });
    }
    console.log(
      `${c.name.padEnd(38)} ${(bytes / 1024).toFixed(1).padStart(5)} KiB  ${f(median(rates))} req/s  ${sends} sends an answer  (${sample.headers.get("transfer-encoding") ?? `Content-Length ${sample.headers.get("content-length")}`})`,
    );
  }
} finally {
  await server.stop();
  rmSync(server.dataDir, { recursive: true, force: true });
}
