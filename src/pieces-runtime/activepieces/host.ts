/**
 * The piece host: a child process that loads one installed Activepieces package and runs its code for the
 * server (./host-process.ts starts it as `weft __piece-host`). Third-party code lives only here, so it never
 * sees the server's environment (it starts with PATH alone: no WEFT_ secret), other connections' values
 * or the database; every socket and fetch it opens obeys the address policy (src/net/socket-guard.ts).
 *
 * Requests come over Bun's IPC channel (./protocol.ts): describe the piece, run an action, list a
 * dropdown's options, validate an auth value, call a trigger hook. The piece's store calls go back to
 * the server, which keeps them in Weft's key-value store.
 */
import { guardProcessSockets } from "../../net/socket-guard";
import { describePiece, describeProp, findPiece, type LoadedPiece, type RawProp } from "./describe";
import { propsValueFor } from "./props-value";
import type { ApEffects, ApRunInfo, FromHost, ToHost } from "./protocol";

type Send = (message: FromHost) => void;

interface StoreCall {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export async function runPieceHost(): Promise<void> {
  const send: Send = (message) => process.send?.(message);
  const modulePath = process.env.WEFT_PIECE_MODULE ?? "";
  const packageName = process.env.WEFT_PIECE_PACKAGE ?? "";
  const version = process.env.WEFT_PIECE_VERSION ?? "";
  const allowCidrs = (process.env.WEFT_ALLOW_CIDRS ?? "").split(",").filter((cidr) => cidr.trim() !== "");
  const guard = guardProcessSockets({ allowCidrs });
  let piece: LoadedPiece;
  try {
    piece = findPiece(await import(modulePath), packageName);
  } catch (error) {
    process.stderr.write(`could not load ${packageName}@${version}: ${messageOf(error)}\n`);
    process.exit(3);
  }
  const host = new PieceHost(piece, packageName, version, send);
  process.on("message", (message: ToHost) => {
    if (message.t === "allow-cidrs") guard.setAllowed(message.allowCidrs);
    else void host.handle(message);
  });
  // The server went away (or closed the channel): nothing more will be asked.
  process.on("disconnect", () => process.exit(0));
  send({ t: "ready" });
}

class PieceHost {
  private readonly storeCalls = new Map<number, StoreCall>();
  private nextCallId = 1;

  constructor(
    private readonly piece: LoadedPiece,
    private readonly packageName: string,
    private readonly version: string,
    private readonly send: Send,
  ) {}

  async handle(message: Exclude<ToHost, { t: "allow-cidrs" }>): Promise<void> {
    if (message.t === "store-result") {
      const call = this.storeCalls.get(message.callId);
      this.storeCalls.delete(message.callId);
      if (message.error !== undefined) call?.reject(new Error(message.error));
      else call?.resolve(message.value ?? null);
      return;
    }
    const effects: ApEffects = { tags: [] };
    try {
      const value = await this.answer(message, effects);
      this.send({ t: "result", id: message.id, value: value === undefined ? null : value, effects });
    } catch (error) {
      this.send({ t: "result", id: message.id, error: messageOf(error), effects });
    }
  }

  private answer(message: Exclude<ToHost, { t: "store-result" | "allow-cidrs" }>, effects: ApEffects): Promise<unknown> | unknown {
    switch (message.t) {
      case "describe":
        return describePiece(this.piece, this.packageName, this.version);
      case "ping":
        return "pong";
      case "action":
        return this.runAction(message, effects);
      case "options":
        return this.options(message);
      case "validate":
        return this.validate(message);
      case "trigger":
        return this.trigger(message);
    }
  }

  private async runAction(message: Extract<ToHost, { t: "action" }>, effects: ApEffects): Promise<unknown> {
    const action = this.piece.actions[message.action];
    if (!action) throw new Error(`${this.packageName} has no action "${message.action}"`);
    const propsValue = await propsValueFor(action.props ?? {}, message.props);
    if (this.piece.legacyAuthProp) propsValue[this.piece.legacyAuthProp] = message.auth;
    const context = this.actionContext(message.id, message.run, message.auth, propsValue, effects);
    return action.run(context);
  }

  private async options(message: Extract<ToHost, { t: "options" }>): Promise<unknown> {
    const owner = message.owner.kind === "action" ? this.piece.actions[message.owner.name] : this.piece.triggers[message.owner.name];
    const prop = owner?.props?.[message.prop];
    const propsValue: Record<string, unknown> = { ...message.props, auth: message.auth };
    if (this.piece.legacyAuthProp) propsValue[this.piece.legacyAuthProp] = message.auth;
    if (prop?.type === "DYNAMIC" && typeof prop.props === "function") {
      // A DYNAMIC property's fields for this config, described as data like the step's own properties.
      const fields = (await (prop.props as (value: unknown, ctx: unknown) => unknown)(propsValue, { server: this.server(message.publicUrl) })) as Record<
        string,
        RawProp
      >;
      return { properties: Object.fromEntries(Object.entries(fields ?? {}).map(([key, field]) => [key, describeProp(field)])) };
    }
    if (!prop || typeof prop.options !== "function") throw new Error(`${message.owner.name}.${message.prop} has no dynamic options`);
    return prop.options(propsValue, {
      server: this.server(message.publicUrl),
      searchValue: message.searchValue,
      project: { id: "weft", externalId: async () => undefined },
      flows: this.flows(""),
      connections: this.connections(),
    });
  }

  private async validate(message: Extract<ToHost, { t: "validate" }>): Promise<{ valid: boolean; error?: string }> {
    const validate = this.piece.auth?.validate;
    if (typeof validate !== "function") return { valid: true };
    const result = (await validate({ auth: message.auth, server: this.server(message.publicUrl) })) as { valid?: boolean; error?: string } | undefined;
    return { valid: result?.valid !== false, error: result?.error };
  }

  private async trigger(message: Extract<ToHost, { t: "trigger" }>): Promise<unknown> {
    const trigger = this.piece.triggers[message.trigger];
    if (!trigger) throw new Error(`${this.packageName} has no trigger "${message.trigger}"`);
    const hook = trigger[message.hook];
    if (typeof hook !== "function") return message.hook === "run" || message.hook === "test" ? [] : null;
    const propsValue = await propsValueFor(trigger.props ?? {}, message.props);
    if (this.piece.legacyAuthProp) propsValue[this.piece.legacyAuthProp] = message.auth;
    const context = {
      auth: message.auth,
      propsValue,
      store: this.store(message.id),
      server: this.server(message.publicUrl),
      webhookUrl: message.webhookUrl,
      payload: message.payload ?? { body: {}, headers: {}, queryParams: {} },
      project: { id: "weft", externalId: async () => undefined },
      flows: this.flows(message.workflowId),
      step: { name: "trigger" },
      connections: this.connections(),
      files: this.files(),
      setSchedule: () => {},
      app: { createListeners: this.unsupported("app.createListeners (APP_WEBHOOK triggers)") },
    };
    return hook.call(trigger, context);
  }

  private actionContext(id: number, run: ApRunInfo, auth: unknown, propsValue: Record<string, unknown>, effects: ApEffects): Record<string, unknown> {
    const resumeUrl = (queryParams: Record<string, string> = {}) => {
      const url = new URL(run.resumeUrl ?? `${run.publicUrl}/`);
      for (const [key, value] of Object.entries(queryParams)) url.searchParams.set(key, value);
      return url.href;
    };
    const pause = (type: "DELAY" | "WEBHOOK", resumeAt?: string) => {
      effects.pause = { type, resumeAt };
    };
    const context: Record<string, unknown> = {
      auth,
      propsValue,
      store: this.store(id),
      files: this.files(),
      server: this.server(run.publicUrl),
      executionType: run.executionType,
      resumePayload: run.resumePayload ?? { body: {}, headers: {}, queryParams: {} },
      step: { name: run.stepName },
      project: { id: "weft", externalId: async () => undefined },
      flows: this.flows(run.workflowId),
      connections: this.connections(),
      tags: {
        add: async ({ name }: { name: string }) => {
          effects.tags.push(String(name));
        },
      },
      output: { update: this.unsupported("output.update") },
      agent: { tools: this.unsupported("agent.tools") },
      run: {
        id: run.runId,
        stop: (params?: { response?: { status?: number; body?: unknown; headers?: Record<string, string> } }) => {
          effects.stop = true;
          if (params?.response) effects.response = params.response;
        },
        respond: (params?: { response?: { status?: number; body?: unknown; headers?: Record<string, string> } }) => {
          if (params?.response) effects.response = params.response;
        },
        pause: ({ pauseMetadata }: { pauseMetadata: { type: string; resumeDateTime?: string } }) =>
          pause(pauseMetadata.type === "DELAY" ? "DELAY" : "WEBHOOK", pauseMetadata.resumeDateTime),
        createWaitpoint: async (params: { type: "DELAY" | "WEBHOOK"; resumeDateTime?: string }) => {
          const waitpoint = { type: params.type, resumeAt: params.resumeDateTime };
          return {
            id: JSON.stringify(waitpoint),
            resumeUrl: resumeUrl(),
            buildResumeUrl: ({ queryParams }: { queryParams: Record<string, string> }) => resumeUrl(queryParams),
          };
        },
        waitForWaitpoint: (waitpointId: string) => {
          const waitpoint = JSON.parse(waitpointId) as { type: "DELAY" | "WEBHOOK"; resumeAt?: string };
          pause(waitpoint.type, waitpoint.resumeAt);
        },
      },
      generateResumeUrl: ({ queryParams }: { queryParams: Record<string, string> }) => resumeUrl(queryParams),
    };
    // Pieces built before the framework versioned its context read the server's URL from `serverUrl`.
    if (this.piece.contextVersion === undefined) context.serverUrl = `${run.publicUrl}/`;
    return context;
  }

  private server(publicUrl: string) {
    const unsupported = this.unsupported("server.token");
    return {
      publicUrl: `${publicUrl}/`,
      apiUrl: `${publicUrl}/api/`,
      get token(): string {
        return unsupported();
      },
    };
  }

  private flows(workflowId: string) {
    return { current: { id: workflowId, version: { id: workflowId } }, list: this.unsupported("flows.list") };
  }

  private connections() {
    return { get: this.unsupported("connections.get (give the step its own connection instead)") };
  }

  /** files.write: the file becomes a data: URL (with its name) that a later step's FILE property reads. */
  private files() {
    return {
      write: async ({ fileName, data }: { fileName: string; data: Uint8Array }) =>
        `data:application/octet-stream;name=${encodeURIComponent(fileName)};base64,${Buffer.from(data).toString("base64")}`,
    };
  }

  /** The piece's store, kept by the server in Weft's key-value store (per workflow, or per workspace for COLLECTION/PROJECT scope). */
  private store(id: number) {
    const call = (op: "get" | "put" | "delete", key: string, scope: unknown, value?: unknown) =>
      new Promise<unknown>((resolve, reject) => {
        const callId = this.nextCallId++;
        this.storeCalls.set(callId, { resolve, reject });
        this.send({ t: "store", id, callId, op, key: String(key), value, scope: scope === "COLLECTION" || scope === "PROJECT" ? "COLLECTION" : "FLOW" });
      });
    return {
      get: (key: string, scope?: string) => call("get", key, scope),
      put: async (key: string, value: unknown, scope?: string) => {
        await call("put", key, scope, value);
        return value;
      },
      delete: async (key: string, scope?: string) => {
        await call("delete", key, scope);
      },
    };
  }

  private unsupported(member: string): () => never {
    return () => {
      throw new Error(`Weft does not provide context.${member} to Activepieces pieces (used by ${this.packageName}@${this.version})`);
    };
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "object" && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string") return message;
    try {
      return JSON.stringify(error).slice(0, 2000);
    } catch {
      return String(error);
    }
  }
  return String(error);
}
