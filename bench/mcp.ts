/**
 * MCP figures (issue 10): a real server, stateless Streamable HTTP, one JSON-RPC message per POST.
 * - tools/call get_action_schema (http.send_request, two gates): calls/s, p50/p99 — compare with the
 *   projection route in bench/projection.ts to see the cost of the MCP layer (a Server + transport per POST).
 * - tools/list with 50 live callable workflows in the workspace (the list is computed per request).
 */
import { BENCH_TOKEN, load, machine, startBenchServer } from "./_support";

console.log(`machine: ${machine()}`);
const server = await startBenchServer([process.execPath, "src/main.ts", "serve"]);
const headers = { authorization: `Bearer ${BENCH_TOKEN}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });

async function post(body: string) {
  const res = await fetch(`${server.url}/mcp`, { method: "POST", headers, body });
  return (await res.json()) as any;
}

try {
  const projection = rpc("tools/call", {
    name: "get_action_schema",
    arguments: { pieceId: "http", actionId: "send_request", values: { body_type: "json", auth_type: "bearer" } },
  });
  const check = await post(projection);
  if (check.result?.isError !== false && check.result?.isError !== undefined) throw new Error(`unexpected answer ${JSON.stringify(check).slice(0, 300)}`);
  await load(`${server.url}/mcp`, { connections: 50, seconds: 2, method: "POST", headers, body: projection });
  const call = await load(`${server.url}/mcp`, { connections: 50, seconds: 5, method: "POST", headers, body: projection });
  console.log(
    `tools/call get_action_schema: ${call.requestsPerSecond.toFixed(0)} calls/s, p50 ${call.p50Ms.toFixed(2)} ms, p99 ${call.p99Ms.toFixed(2)} ms, errors ${call.errors} (${call.tool})`,
  );

  for (let i = 0; i < 50; i++) {
    const created = await post(
      rpc("tools/call", {
        name: "create_workflow",
        arguments: {
          name: `Callable ${i}`,
          definition: {
            schemaVersion: 2,
            trigger: {
              name: "trigger",
              type: "callable",
              pieceId: "subflows",
              actionId: "callable",
              config: { fields: [{ name: "n", type: "number", required: true }] },
              nextAction: { name: "answer", type: "PIECE", pieceId: "subflows", actionId: "return_response", config: { value: "{{ trigger.body.n }}" } },
            },
          },
        },
      }),
    );
    await post(rpc("tools/call", { name: "publish_workflow", arguments: { id: created.result.structuredContent.data.id } }));
  }
  const listBody = rpc("tools/list", {});
  const listed = await post(listBody);
  console.log(`tools/list: ${listed.result.tools.length} tools (50 callable workflows)`);
  const list = await load(`${server.url}/mcp`, { connections: 50, seconds: 5, method: "POST", headers, body: listBody });
  console.log(
    `tools/list with 50 callable workflows: ${list.requestsPerSecond.toFixed(0)} lists/s, p50 ${list.p50Ms.toFixed(2)} ms, p99 ${list.p99Ms.toFixed(2)} ms, errors ${list.errors}`,
  );

  const callableBody = rpc("tools/call", { name: "callable_7", arguments: { n: 7 } });
  const answer = await post(callableBody);
  if (answer.result.structuredContent.data !== 7) throw new Error(`callable answered ${JSON.stringify(answer)}`);
  const callable = await load(`${server.url}/mcp`, { connections: 20, seconds: 5, method: "POST", headers, body: callableBody });
  console.log(
    `callable workflow tool (run + wait + response): ${callable.requestsPerSecond.toFixed(0)} calls/s, p50 ${callable.p50Ms.toFixed(2)} ms, p99 ${callable.p99Ms.toFixed(2)} ms, errors ${callable.errors}`,
  );
} finally {
  await server.stop();
}
