import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000015",
  slug: "summarise-with-llm",
  name: "Summarise text with your LLM",
  description:
    "A webhook that answers with a two-sentence summary of the text it is sent, written by any OpenAI-compatible model (a local Ollama or llama.cpp server, or OpenAI). Choose your LLM connection and model on the summary step",
  category: "webhooks",
  definition: base({
    name: "trigger",
    displayName: "Text to summarise",
    type: "webhook",
    pieceId: "webhook",
    actionId: "catch_webhook",
    config: {},
    nextAction: {
      name: "summary",
      displayName: "Summarise",
      type: "PIECE",
      pieceId: "llm",
      actionId: "chat_completion",
      config: { model: "llama3.2", system: "Summarise the user's text in two sentences.", prompt: "{{trigger.body.text}}" },
      nextAction: {
        name: "reply",
        displayName: "Answer with the summary",
        type: "PIECE",
        pieceId: "webhook",
        actionId: "respond",
        config: { status: 200, body: { summary: "{{summary.output.text}}" } },
      },
    },
  }),
} satisfies BuiltinTemplate;
