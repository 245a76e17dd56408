/**
 * The llm piece against a local server speaking the OpenAI routes (/v1/models, /v1/chat/completions,
 * /v1/embeddings) — a fixture server, not a mock of the piece: the piece's own HTTP client talks to it,
 * through a real connection, in published workflows. Structured output refuses an answer that does not
 * match its schema, naming the mismatch.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkStructured } from "../../pieces/llm";
import { testApp, type TestApp } from "../support/app";

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
const seen: Array<{ path: string; auth: string | null; body: any }> = [];
/** What the fixture's chat route answers next (the model's message content). */
let nextContent = "";

beforeAll(async () => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.method === "POST" ? await req.json() : null;
      seen.push({ path: url.pathname, auth: req.headers.get("authorization"), body });
      if (req.headers.get("authorization") !== "Bearer sk-test") return Response.json({ error: { message: "Incorrect API key provided" } }, { status: 401 });
      if (url.pathname === "/v1/models") return Response.json({ object: "list", data: [{ id: "llama3.2" }, { id: "nomic-embed-text" }] });
      if (url.pathname === "/v1/chat/completions") {
        if (body.model !== "llama3.2") return Response.json({ error: { message: `model "${body.model}" not found, try pulling it first` } }, { status: 404 });
        return Response.json({
          id: "c1",
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content: nextContent }, finish_reason: "stop" }],
          usage: { prompt_tokens: 21, completion_tokens: 5, total_tokens: 26 },
        });
      }
      if (url.pathname === "/v1/embeddings") {
        const inputs = Array.isArray(body.input) ? body.input : [body.input];
        // Answered out of order: the piece sorts by index.
        const data = inputs.map((text: string, index: number) => ({ object: "embedding", index, embedding: [text.length, index, 0.5] })).reverse();
        return Response.json({ object: "list", model: body.model, data, usage: { prompt_tokens: 6, total_tokens: 6 } });
      }
      return new Response("not found", { status: 404 });
    },
  });
  t = await testApp({ WEFT_ALLOW_CIDRS: "127.0.0.0/8" });
});
afterAll(() => server.stop(true));

let connections = 0;
async function connection(apiKey = "sk-test"): Promise<string> {
  const res = await t.req("POST", "/api/connections", {
    body: { pieceId: "llm", name: `llm ${apiKey} ${++connections}`, values: { base_url: `http://127.0.0.1:${server.port}/v1/`, api_key: apiKey } },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function runStep(actionId: string, config: Record<string, unknown>, connectionId: string) {
  const definition = {
    schemaVersion: 2,
    trigger: { name: "trigger", type: "manual", config: {}, nextAction: { name: "ask", type: "PIECE", pieceId: "llm", actionId, connectionId, config } },
  };
  const made = await t.req("POST", "/api/workflows", { body: { name: actionId, definition } });
  expect((await t.req("POST", `/api/workflows/${made.body.data.id}/publish`)).status).toBe(200);
  const run = await t.req("POST", `/api/workflows/${made.body.data.id}/run?environment=production&wait=10`, { body: { text: "I love it" } });
  return run.body.data;
}

describe("llm", () => {
  test("chat completion: system and user messages, temperature and max tokens go out; text and token usage come back", async () => {
    const conn = await connection();
    nextContent = "Hello Ada!";
    const run = await runStep(
      "chat_completion",
      { model: "llama3.2", system: "Be brief.", prompt: "Greet {{trigger.body.text}}", temperature: 0.2, max_tokens: 50 },
      conn,
    );
    expect(run.status).toBe("completed");
    expect(run.steps[0].outputData).toEqual({
      text: "Hello Ada!",
      model: "llama3.2",
      finishReason: "stop",
      usage: { promptTokens: 21, completionTokens: 5, totalTokens: 26 },
    });
    const sent = seen.findLast((s) => s.path === "/v1/chat/completions")!;
    expect(sent.auth).toBe("Bearer sk-test");
    expect(sent.body).toEqual({
      model: "llama3.2",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Greet I love it" },
      ],
      temperature: 0.2,
      max_tokens: 50,
    });
  });

  test("the model dropdown lists the server's models through the connection", async () => {
    const conn = await connection();
    const res = await t.req("POST", "/api/pieces/llm/actions/chat_completion/options/model", { body: { connectionId: conn, config: {} } });
    expect(res.status).toBe(200);
    expect(res.body.data.options.map((o: any) => o.value)).toEqual(["llama3.2", "nomic-embed-text"]);
  });

  test("structured output: the answer is parsed and checked; a non-conforming answer fails with the mismatch", async () => {
    const conn = await connection();
    const schema = {
      type: "object",
      properties: { sentiment: { type: "string", enum: ["positive", "negative"] }, score: { type: "number" } },
      required: ["sentiment", "score"],
      additionalProperties: false,
    };
    nextContent = '```json\n{"sentiment": "positive", "score": 0.9}\n```';
    const ok = await runStep("structured_output", { model: "llama3.2", prompt: "Rate: {{trigger.body.text}}", schema }, conn);
    expect(ok.status).toBe("completed");
    expect(ok.steps[0].outputData.data).toEqual({ sentiment: "positive", score: 0.9 });
    expect(seen.findLast((s) => s.path === "/v1/chat/completions")!.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "output", schema, strict: true },
    });

    nextContent = '{"sentiment": "delighted", "score": 0.9}';
    const bad = await runStep("structured_output", { model: "llama3.2", prompt: "Rate it", schema }, conn);
    expect(bad.status).toBe("failed");
    expect(bad.errorMessage).toContain("does not match the schema: /sentiment must be equal to one of the allowed values");
    nextContent = "I think it is positive.";
    const prose = await runStep("structured_output", { model: "llama3.2", prompt: "Rate it", schema }, conn);
    expect(prose.errorMessage).toContain("the model did not answer with JSON");
    await expect(checkStructured("{}", { type: "wrong" })).rejects.toThrow("schema is not a valid JSON Schema");
  });

  test("embeddings: one vector per text, in input order, with usage", async () => {
    const conn = await connection();
    const run = await runStep("embeddings", { model: "nomic-embed-text", input: ["a", "bbb"] }, conn);
    expect(run.status).toBe("completed");
    expect(run.steps[0].outputData).toEqual({
      embeddings: [
        [1, 0, 0.5],
        [3, 1, 0.5],
      ],
      model: "nomic-embed-text",
      usage: { promptTokens: 6, completionTokens: null, totalTokens: 6 },
    });
  });

  test("the server's refusals read as its own words; the connection check uses /models", async () => {
    const wrong = await connection("sk-wrong");
    const refused = await runStep("chat_completion", { model: "llama3.2", prompt: "hi" }, wrong);
    expect(refused.errorMessage).toContain("the LLM server answered 401: Incorrect API key provided");
    const conn = await connection();
    const missing = await runStep("chat_completion", { model: "gpt-99", prompt: "hi" }, conn);
    expect(missing.errorMessage).toContain('model "gpt-99" not found');
    expect((await t.req("POST", `/api/connections/${conn}/test`)).body.data).toMatchObject({ ok: true, message: "the server lists 2 models" });
  });

  test("without WEFT_ALLOW_CIDRS, a server on this machine is refused by the SSRF guard", async () => {
    const strict = await testApp();
    const made = await strict.req("POST", "/api/connections", {
      body: { pieceId: "llm", name: "local", values: { base_url: `http://127.0.0.1:${server.port}/v1`, api_key: "sk-test" } },
    });
    const definition = {
      schemaVersion: 2,
      trigger: {
        name: "trigger",
        type: "manual",
        config: {},
        nextAction: {
          name: "ask",
          type: "PIECE",
          pieceId: "llm",
          actionId: "chat_completion",
          connectionId: made.body.data.id,
          config: { model: "llama3.2", prompt: "hi" },
        },
      },
    };
    const wf = await strict.req("POST", "/api/workflows", { body: { name: "strict", definition } });
    const run = await strict.req("POST", `/api/workflows/${wf.body.data.id}/run?environment=test&wait=10`, { body: {} });
    expect(run.body.data.status).toBe("failed");
    expect(run.body.data.errorMessage).toContain("WEFT_ALLOW_CIDRS");
  });
});
