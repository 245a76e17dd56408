/**
 * LLM: any OpenAI-compatible API — OpenAI itself, or a local Ollama, llama.cpp, vLLM or LM Studio server.
 * A connection holds the base URL (e.g. http://127.0.0.1:11434/v1) and the API key (optional for local
 * servers). Chat completion, structured output (a JSON Schema the answer must match, checked with Ajv)
 * and embeddings; token usage is in every output. HTTP goes through ctx.fetch (the SSRF guard): a server
 * on this machine or the LAN needs its range in WEFT_ALLOW_CIDRS.
 */
import { action, Auth, baseUrlOf, connectionCheck, definePiece, httpRequest, loadOnce, Property } from "../../src/pieces-sdk";
import type { DynamicOptionsContext, GuardedFetch, ResolvedAuth } from "../../src/pieces-sdk/types";

interface Api {
  base: string;
  headers: Record<string, string>;
}

function apiOf(auth: ResolvedAuth | undefined): Api {
  if (auth?.kind !== "custom") throw new Error("this step needs an LLM connection (base URL and API key); set its connectionId");
  const raw = baseUrlOf(auth.values.base_url, "the connection's base URL", "https://api.openai.com/v1 or http://127.0.0.1:11434/v1");
  const key = String(auth.values.api_key ?? "").trim();
  return { base: raw, headers: key ? { authorization: `Bearer ${key}` } : {} };
}

/** Token counts as OpenAI-compatible servers send them. */
interface LlmUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

/** The parts of an OpenAI-compatible answer the steps read; servers differ, so each may be missing. */
interface LlmAnswer {
  model?: string;
  /** /models: the model list; /embeddings: the vectors. */
  data?: unknown;
  choices?: Array<{ message?: { content?: unknown }; finish_reason?: string | null } | null>;
  usage?: LlmUsage;
  error?: unknown;
}

/** An answer's JSON body; null when the server sent none. */
function call(fetch: GuardedFetch, api: Api, path: string, body: unknown, signal: AbortSignal): Promise<LlmAnswer | null> {
  return httpRequest<LlmAnswer | null>(fetch, `${api.base}${path}`, {
    service: "the LLM server",
    method: body === undefined ? "GET" : "POST",
    headers: api.headers,
    json: body,
    signal,
    read: "json",
  });
}

/** Token usage in the step's words; absent counts are null (some local servers send none). */
const usageOf = (u: LlmUsage | null | undefined) => ({
  promptTokens: u?.prompt_tokens ?? null,
  completionTokens: u?.completion_tokens ?? null,
  totalTokens: u?.total_tokens ?? null,
});

const modelProp = () =>
  Property.dropdown({
    displayName: "Model",
    description: "listed from the server's /models; type any model name the server knows",
    required: true,
    refreshers: ["auth"],
    options: async (ctx: DynamicOptionsContext) => {
      const answer = await call(ctx.fetch, apiOf(ctx.auth), "/models", undefined, ctx.signal);
      const models: Array<{ id?: unknown } | null> = Array.isArray(answer?.data) ? answer.data : [];
      const ids = models
        .map((m) => String(m?.id ?? ""))
        .filter(Boolean)
        .sort();
      return ids.length ? { options: ids.map((id: string) => ({ label: id, value: id })) } : { options: [], placeholder: "The server lists no models" };
    },
  });

const promptProps = () => ({
  model: modelProp(),
  system: Property.longText({ displayName: "System message", description: "instructions for the model (optional)" }),
  prompt: Property.longText({ displayName: "User message", required: true }),
  temperature: Property.number({ displayName: "Temperature", min: 0, max: 2, description: "0 = most deterministic" }),
  max_tokens: Property.integer({ displayName: "Maximum tokens", min: 1, max: 1_000_000, description: "of the answer" }),
});

function chatBody(c: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const messages = [...(c.system ? [{ role: "system", content: String(c.system) }] : []), { role: "user", content: String(c.prompt ?? "") }];
  const body: Record<string, unknown> = { model: String(c.model ?? ""), messages, ...extra };
  if (typeof c.temperature === "number") body.temperature = c.temperature;
  if (typeof c.max_tokens === "number") body.max_tokens = c.max_tokens;
  return body;
}

function firstChoice(answer: LlmAnswer | null): { content: string; finishReason: string | null } {
  const choice = answer?.choices?.[0];
  const content = choice?.message?.content;
  if (typeof content !== "string")
    throw new Error(`the LLM server's answer has no message content (choices[0].message.content): ${JSON.stringify(answer).slice(0, 200)}`);
  // content is a string, so choice is there.
  return { content, finishReason: choice?.finish_reason ?? null };
}

/** Ajv, loaded with the first structured-output step. */
const ajv = loadOnce(async () => new (await import("ajv")).default({ allErrors: false, strict: false }));

/** The step's schema, compiled; a value that is no JSON Schema is refused with the reason. */
async function compileSchema(schema: unknown) {
  if (!schema || typeof schema !== "object" || Array.isArray(schema))
    throw new Error('schema must be a JSON Schema object, e.g. {"type": "object", "properties": {...}, "required": [...]}');
  const compiler = await ajv();
  try {
    return compiler.compile(schema as object);
  } catch (error) {
    throw new Error(`schema is not a valid JSON Schema: ${(error as Error).message}`);
  }
}

/** The model's JSON answer, checked against the step's schema; the first mismatch is named. */
export async function checkStructured(content: string, schema: unknown): Promise<unknown> {
  const validate = await compileSchema(schema);
  // Some models wrap JSON in a Markdown code fence.
  const text = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, "$1");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`the model did not answer with JSON: ${text.slice(0, 200)}`);
  }
  if (!validate(value)) {
    const e = validate.errors?.[0];
    throw new Error(
      `the model's answer does not match the schema: ${e?.instancePath || "/"} ${e?.message ?? "is invalid"}${e?.params ? ` (${JSON.stringify(e.params)})` : ""}; answer: ${text.slice(0, 200)}`,
    );
  }
  return value;
}

export default definePiece({
  id: "llm",
  name: "LLM",
  version: "1.0.0",
  icon: "🤖",
  description: "Chat, structured output and embeddings with any OpenAI-compatible API (OpenAI, Ollama, llama.cpp, vLLM)",
  auth: Auth.custom({
    base_url: Property.shortText({
      displayName: "Base URL",
      required: true,
      default: "https://api.openai.com/v1",
      description: "e.g. http://127.0.0.1:11434/v1 for Ollama",
    }),
    api_key: Property.secretText({ displayName: "API key", description: "leave empty for a local server that needs none" }),
  }),
  checkConnection: connectionCheck(async ({ auth, fetch, signal }) => {
    const answer = await call(fetch, apiOf(auth), "/models", undefined, signal);
    return `the server lists ${Array.isArray(answer?.data) ? answer.data.length : 0} models`;
  }),
  actions: [
    action({
      id: "chat_completion",
      name: "Chat completion",
      description: "Ask the model; the answer's text is the output, with token usage",
      sideEffects: "external",
      props: promptProps(),
      sampleData: { text: "Hello!", model: "llama3.2", finishReason: "stop", usage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 } },
      async run(ctx) {
        const answer = await call(ctx.fetch, apiOf(ctx.auth), "/chat/completions", chatBody(ctx.config as Record<string, unknown>), ctx.signal);
        const { content, finishReason } = firstChoice(answer);
        // firstChoice threw unless the answer has a message, so answer is not null here.
        return { text: content, model: answer?.model ?? (ctx.config as Record<string, unknown>).model, finishReason, usage: usageOf(answer?.usage) };
      },
    }),
    action({
      id: "structured_output",
      name: "Structured output",
      description: "Ask for JSON matching a schema; the output is the parsed, checked object",
      sideEffects: "external",
      props: {
        ...promptProps(),
        schema: Property.json({
          displayName: "JSON Schema",
          required: true,
          description: 'e.g. {"type": "object", "properties": {"sentiment": {"type": "string", "enum": ["positive", "negative"]}}, "required": ["sentiment"]}',
        }),
      },
      sampleData: { data: { sentiment: "positive" }, model: "llama3.2", usage: { promptTokens: 40, completionTokens: 8, totalTokens: 48 } },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        // Refuse a bad schema before paying for a completion.
        await compileSchema(c.schema);
        const body = chatBody(c, { response_format: { type: "json_schema", json_schema: { name: "output", schema: c.schema, strict: true } } });
        const answer = await call(ctx.fetch, apiOf(ctx.auth), "/chat/completions", body, ctx.signal);
        const { content } = firstChoice(answer);
        return { data: await checkStructured(content, c.schema), model: answer?.model ?? c.model, usage: usageOf(answer?.usage) };
      },
    }),
    action({
      id: "embeddings",
      name: "Embeddings",
      description: "Turn one text, or a list of texts, into vectors",
      sideEffects: "external",
      props: {
        model: modelProp(),
        input: Property.json({ displayName: "Text", required: true, description: 'a text, or a list of texts: ["first", "second"]' }),
      },
      sampleData: { embeddings: [[0.01, -0.02, 0.03]], model: "nomic-embed-text", usage: { promptTokens: 4, completionTokens: null, totalTokens: 4 } },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const input = c.input;
        if (!(typeof input === "string" || (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === "string")))) {
          throw new Error("input must be a text or a non-empty list of texts");
        }
        const answer = await call(ctx.fetch, apiOf(ctx.auth), "/embeddings", { model: String(c.model ?? ""), input }, ctx.signal);
        // An empty body failed here before (reading its model); it still fails, with words.
        if (answer === null) throw new Error("the LLM server answered /embeddings with an empty body");
        const data: Array<{ index?: number; embedding?: unknown }> = Array.isArray(answer.data) ? answer.data : [];
        const rows = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
        return { embeddings: rows.map((row) => row.embedding), model: answer.model ?? c.model, usage: usageOf(answer.usage) };
      },
    }),
  ],
});
