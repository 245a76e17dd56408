/**
 * Workflow figures (issue 3): create + publish of a 50-step workflow over HTTP (p50/p99, sequential
 * client against a real server with the default durable SQLite settings), and validation of a
 * 500-step definition — in process (the gate alone) and over HTTP (parse, structure, gate, envelope).
 */
import { join } from "node:path";
import { builtinRegistry } from "../src/pieces-runtime/registry";
import { clearExpressionVerdicts, validateDefinition } from "../src/core/workflows/validate";
import { BENCH_TOKEN, ROOT, machine, startBenchServer } from "./_support";

/** `length` nodes in the main chain; every 10th is a router whose first branch holds one more step. */
function chain(length: number) {
  const trigger: any = { name: "trigger", type: "manual", config: {} };
  let tail = trigger;
  for (let i = 1; i <= length; i++) {
    const node =
      i % 10 === 0
        ? {
            name: `s${i}`,
            type: "ROUTER",
            branches: [
              {
                name: "big",
                conditions: [[{ field: `{{s${i - 1}.output.n}}`, operator: "number_gt", value: 10 }]],
                firstAction: { name: `s${i}_tag`, type: "PIECE", pieceId: "tags", actionId: "add_tags", config: { tags: ["big"] } },
              },
              { name: "otherwise", conditions: [] },
            ],
          }
        : {
            name: `s${i}`,
            type: "PIECE",
            pieceId: "data",
            actionId: "set_fields",
            config: {
              fields: {
                n: i === 1 ? "{{trigger.body.n}}" : i % 10 === 5 ? `{{ $number(s${i - 1}.output.n) + 1 }}` : `{{s${i - 1}.output.n}}`,
                who: '{{ "for " & trigger.body.name }}',
                label: "step " + i,
              },
            },
          };
    tail.nextAction = node;
    tail = node;
  }
  return { schemaVersion: 2, trigger, settings: {}, variables: {}, annotations: null, pinnedData: {} };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

console.log(`machine: ${machine()}`);

// --- the gate alone, in process. Cold: every expression seen for the first time (the JSONata parse
// of each non-bare expression costs ~0.2 ms); warm: the editor's case, revalidating after a save.
const pieces = builtinRegistry();
const big = chain(455); // 455 + 45 branch steps = 500 steps
for (let i = 0; i < 30; i++) validateDefinition(big, { pieces }); // warm-up (JIT)
const cold: number[] = [];
const warm: number[] = [];
for (let i = 0; i < 200; i++) {
  clearExpressionVerdicts();
  let started = performance.now();
  const result = validateDefinition(big, { pieces });
  cold.push(performance.now() - started);
  if (!result.valid) throw new Error(`bench definition is invalid: ${JSON.stringify(result.errors[0])}`);
  started = performance.now();
  validateDefinition(big, { pieces });
  warm.push(performance.now() - started);
}
const expressions = JSON.stringify(big).match(/\{\{/g)!.length;
console.log(
  `validate 500-step definition (${expressions} expressions, 1 in 10 non-bare), in process: cold p50 ${percentile(cold, 50).toFixed(2)} ms (p99 ${percentile(cold, 99).toFixed(2)}), warm p50 ${percentile(warm, 50).toFixed(2)} ms (p99 ${percentile(warm, 99).toFixed(2)})`,
);

// --- over HTTP against a real server
const server = await startBenchServer([process.execPath, join(ROOT, "src/main.ts"), "serve"]);
const headers = { authorization: `Bearer ${BENCH_TOKEN}`, "content-type": "application/json" };
const bigBody = JSON.stringify(big);
const http: number[] = [];
for (let i = 0; i < 220; i++) {
  const started = performance.now();
  const res = await fetch(`${server.url}/api/workflows/validate`, { method: "POST", headers, body: bigBody });
  const body = (await res.json()) as any;
  if (i >= 20) http.push(performance.now() - started);
  if (!body.data?.valid) throw new Error(`validate failed: ${JSON.stringify(body).slice(0, 300)}`);
}
console.log(
  `POST /api/workflows/validate, 500 steps (${(bigBody.length / 1024).toFixed(0)} KiB): p50 ${percentile(http, 50).toFixed(2)} ms, p99 ${percentile(http, 99).toFixed(2)} ms`,
);

const fifty = JSON.stringify({ name: "bench", definition: chain(46) }); // 46 + 4 = 50 steps
const both: number[] = [];
const createOnly: number[] = [];
for (let i = 0; i < 220; i++) {
  const started = performance.now();
  const created = (await (await fetch(`${server.url}/api/workflows`, { method: "POST", headers, body: fifty })).json()) as any;
  const mid = performance.now();
  const published = await fetch(`${server.url}/api/workflows/${created.data.id}/publish`, {
    method: "POST",
    headers: { authorization: headers.authorization },
  });
  await published.json();
  if (published.status !== 200) throw new Error(`publish answered ${published.status}`);
  if (i >= 20) {
    both.push(performance.now() - started);
    createOnly.push(mid - started);
  }
}
console.log(
  `create + publish of a 50-step workflow (sequential, 200 samples): p50 ${percentile(both, 50).toFixed(2)} ms, p99 ${percentile(both, 99).toFixed(2)} ms (create alone p50 ${percentile(createOnly, 50).toFixed(2)} ms)`,
);
await server.stop();
