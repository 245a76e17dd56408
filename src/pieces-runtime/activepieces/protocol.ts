/**
 * What the server and a piece host process (./host.ts) say to each other over Bun's IPC channel, and the
 * plain description of an Activepieces piece that the host sends once and the server keeps on disk.
 * Everything here is data: the host never receives the server's secrets, only one step's auth value.
 */

/** An Activepieces property as plain data (functions replaced by flags). */
export interface ApProp {
  type: string;
  displayName?: string;
  description?: string;
  required?: boolean;
  defaultValue?: unknown;
  /** STATIC_DROPDOWN / STATIC_MULTI_SELECT_DROPDOWN: the fixed options. */
  options?: { options?: Array<{ label: string; value: unknown }>; disabled?: boolean; placeholder?: string };
  /** DROPDOWN / MULTI_SELECT_DROPDOWN / DYNAMIC: options (or props) come from the piece's function. */
  dynamic?: boolean;
  refreshers?: string[];
  /** ARRAY with item properties. */
  properties?: Record<string, ApProp>;
  /** CUSTOM_AUTH: its fields. */
  props?: Record<string, ApProp>;
  /** OAUTH2 */
  authUrl?: string;
  tokenUrl?: string;
  scope?: string[];
  pkce?: boolean;
  extra?: Record<string, string>;
  /** CUSTOM_AUTH / SECRET_TEXT / BASIC_AUTH: has a `validate` function. */
  validates?: boolean;
}

export interface ApStepDescription {
  name: string;
  displayName: string;
  description: string;
  props: Record<string, ApProp>;
  requireAuth: boolean;
  sampleData?: unknown;
  /** Triggers: POLLING, WEBHOOK, APP_WEBHOOK. */
  type?: string;
  /** WEBHOOK triggers: which calls are the provider's handshake (answered by onHandshake, starting no run). */
  handshake?: { strategy: "HEADER_PRESENT" | "QUERY_PRESENT" | "BODY_PARAM_PRESENT"; paramName: string };
  /** WEBHOOK triggers whose registration expires: when onRenew is due (a cron expression). */
  renewCron?: string;
}

export interface ApPieceDescription {
  package: string;
  version: string;
  displayName: string;
  description: string;
  logoUrl?: string;
  /** Activepieces' categories (COMMUNICATION, DEVELOPER_TOOLS, …); absent in descriptions made before the catalog. */
  categories?: string[];
  minimumSupportedRelease?: string;
  /**
   * The framework's context version ("1", "2"), absent for pieces built before it existed. It decides the
   * shape of `context.auth`: typed values ({ type, props }, { type, secret_text }) from "1" on, plain ones before.
   */
  contextVersion?: string;
  /** The piece's auth (the first of several, when the piece offers a choice), or the legacy per-action auth prop. */
  auth?: ApProp;
  /** Pieces built on the 0.2/0.3 framework declare auth as a property of each action: its name. */
  legacyAuthProp?: string;
  actions: Record<string, ApStepDescription>;
  triggers: Record<string, ApStepDescription>;
}

/** The auth value of one step, already in the shape the piece expects (the server builds it). */
export type ApAuthValue = unknown;

export interface ApRunInfo {
  runId: string;
  workflowId: string;
  stepName: string;
  executionType: "BEGIN" | "RESUME";
  resumePayload?: unknown;
  /** The URL that resumes this step when it pauses for a webhook (generateResumeUrl builds on it). */
  resumeUrl?: string;
  publicUrl: string;
}

export type ToHost =
  | { t: "describe"; id: number }
  /** Answers at once: the package is loaded and the host takes calls (its start-up, measured alone). */
  | { t: "ping"; id: number }
  | { t: "action"; id: number; action: string; props: Record<string, unknown>; auth: ApAuthValue; run: ApRunInfo }
  | {
      t: "options";
      id: number;
      owner: { kind: "action" | "trigger"; name: string };
      prop: string;
      props: Record<string, unknown>;
      auth: ApAuthValue;
      searchValue?: string;
      publicUrl: string;
    }
  | { t: "validate"; id: number; auth: ApAuthValue; publicUrl: string }
  | {
      t: "trigger";
      id: number;
      hook: "onEnable" | "onDisable" | "run" | "test" | "onHandshake" | "onRenew";
      trigger: string;
      props: Record<string, unknown>;
      auth: ApAuthValue;
      workflowId: string;
      webhookUrl: string;
      payload?: unknown;
      publicUrl: string;
    }
  | { t: "store-result"; callId: number; value?: unknown; error?: string }
  /** The address policy's allow-list changed (Settings → Network): connections opened after it obey the new one. */
  | { t: "allow-cidrs"; allowCidrs: string[] };

/** What an action asked for besides its return value. */
export interface ApEffects {
  tags: string[];
  /** run.pause / waitForWaitpoint: the step pauses (and runs again with executionType RESUME). */
  pause?: { type: "DELAY" | "WEBHOOK"; resumeAt?: string };
  /** run.stop / run.respond: the webhook reply, when the piece gave one. */
  response?: { status?: number; body?: unknown; headers?: Record<string, string> };
  stop?: boolean;
}

export type FromHost =
  | { t: "ready" }
  | { t: "result"; id: number; value?: unknown; error?: string; effects?: ApEffects }
  | { t: "store"; id: number; callId: number; op: "get" | "put" | "delete"; key: string; value?: unknown; scope: "FLOW" | "COLLECTION" }
  | { t: "log"; id: number; message: string };
