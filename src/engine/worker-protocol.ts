/**
 * Messages between the engine (main thread) and its worker threads. Sent as JSON strings: faster than
 * structured clone here, and a large message cannot crash the receiver.
 */
import type { ResolvedAuth, RunInfo } from "../pieces-sdk/types";
import type { ActionOutcome } from "./invoke-action";
import type { SubflowCall, SubflowResult, WebhookReply } from "./step-context";

export interface WorkerInit {
  t: "init";
  piecesDir: string | undefined;
  /** Where the database is (store/open.ts `storeAddress`), for the workspace key-value store (`ctx.store`); null for an in-memory database. */
  store: string | null;
  dbSynchronous: "FULL" | "NORMAL";
  /** WEFT_ALLOW_CIDRS and the stored ranges: what the worker's SSRF-guarded fetch may reach although not public. */
  allowCidrs: string[];
}

export interface StepRequest {
  t: "step";
  id: string;
  pieceId: string;
  actionId: string;
  config: Record<string, unknown>;
  auth?: ResolvedAuth;
  run: RunInfo;
  resumePayload?: Record<string, unknown>;
  publicUrl: string;
}

export type ToWorker =
  | WorkerInit
  | StepRequest
  /** The allow-list changed (Settings → Network): steps sent after this message use the new one. */
  | { t: "allow-cidrs"; allowCidrs: string[] }
  | { t: "cancel"; id: string }
  | { t: "call-result"; id: string; callId: number; ok: true; result: SubflowResult }
  | { t: "call-result"; id: string; callId: number; ok: false; error: string };

export type FromWorker =
  | { t: "ready"; pieces: Record<string, string> }
  | { t: "init-failed"; error: string }
  | { t: "done"; id: string; outcome: ActionOutcome }
  | { t: "reply"; id: string; reply: WebhookReply }
  | { t: "call"; id: string; callId: number; call: SubflowCall }
  | { t: "log"; id: string; message: string; fields?: Record<string, unknown> };
