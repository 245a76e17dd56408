/**
 * An answer whose JSON is already text (a cached projection, a run-list page a reader thread made): sent as it
 * is, without Elysia serialising it again. Its route still declares the response schema for the contract, but
 * Elysia checks only answers it serialises itself, so the text is checked by tests instead (the run list's:
 * test/runs/list.test.ts). A large one leaves as a stream (./answer-body.ts).
 */
import { answerBody } from "./answer-body";

export const jsonText = (body: string) => new Response(answerBody(body), { headers: { "content-type": "application/json" } });
