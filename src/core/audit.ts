/**
 * The audit log (docs/teams.md, "Audit log"): the one place where who did what, when and from where is told.
 * Each action is recorded once, here: stored through the port (read back by GET /api/audit and its export) and
 * forwarded to the log stream (docs/operations.md, "Log streaming") as an event of the same type.
 *
 *   await audit.record(who, "connection.created", { type: "connection", id, name }, { piece: "slack" });
 *
 * Details never hold a secret: keys that name one are dropped before anything is stored or sent.
 */
import { newId } from "../lib/ids";
import type { AuditEventRow, AuditFilter } from "../store/audit";
import { nowIso } from "../store/db";
import type { Storage } from "../store/port";
import type { Principal } from "./identity";
import type { EventSink, Severity } from "./log-stream/events";

/** Who acted: a signed-in user, an API token, or nobody known (a failed login). */
export interface AuditActor {
  type: "user" | "token" | "anonymous";
  id: string | null;
  /** The user's e-mail or the token's name. */
  name: string | null;
}

/** The request an action came with: who, in which workspace, from which address and client. */
export interface AuditContext {
  actor: AuditActor;
  workspaceId: string;
  ip: string | null;
  userAgent: string | null;
}

export interface AuditTarget {
  type: string;
  id: string | null;
  name?: string | null;
}

export interface AuditEvent {
  id: string;
  time: string;
  workspaceId: string;
  actor: AuditActor;
  action: string;
  target: { type: string; id: string | null; name: string | null } | null;
  details: Record<string, unknown>;
  ip: string | null;
  userAgent: string | null;
}

/** Keys of details that could hold a secret; dropped at any depth. */
const SECRET_KEY = /^(.*password|.*secret|.*token|credentials?|.*api_?key|private_?key|cookie|authorization|headers|values?)$/i;

/** Details without anything that could be a secret. */
export function withoutSecrets(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    if (SECRET_KEY.test(key) || value === undefined) continue;
    out[key] = value !== null && typeof value === "object" && !Array.isArray(value) ? withoutSecrets(value as Record<string, unknown>) : value;
  }
  return out;
}

/** Severity on the log stream: refusals warn, changes to who may do what are notices. */
function severityOf(action: string): Severity {
  if (action.endsWith(".failed")) return "warning";
  if (/^(login|token|member|invitation|session|password|second_factor)\./.test(action)) return "notice";
  return "info";
}

function eventOf(row: AuditEventRow): AuditEvent {
  return {
    id: row.id,
    time: row.created_at,
    workspaceId: row.workspace_id,
    actor: { type: row.actor_type as AuditActor["type"], id: row.actor_id, name: row.actor_name },
    action: row.action,
    target: row.target_type === null ? null : { type: row.target_type, id: row.target_id, name: row.target_name },
    details: JSON.parse(row.details) as Record<string, unknown>,
    ip: row.ip,
    userAgent: row.user_agent,
  };
}

const DAY_MS = 86_400_000;
/** Events read per page of an export. */
const EXPORT_PAGE = 500;

export interface AuditOptions {
  storage: Storage;
  sink: EventSink;
  /** WEFT_AUDIT_RETENTION_DAYS; 0 keeps every event. */
  retentionDays: number;
  /** The clock events are stamped with (the store's, ISO 8601). */
  now?: () => string;
}

export class Audit {
  private readonly now: () => string;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly o: AuditOptions) {
    this.now = o.now ?? nowIso;
  }

  /** The context of a call by `principal` (its user's e-mail or its token's name looked up) from `ip` with `userAgent`. */
  async contextOf(principal: Principal, ip: string | null, userAgent: string | null): Promise<AuditContext> {
    const identity = this.o.storage.identity;
    const actor: AuditActor =
      principal.kind === "session"
        ? { type: "user", id: principal.userId, name: principal.userId ? ((await identity.user(principal.userId))?.email ?? null) : null }
        : { type: "token", id: principal.credentialId, name: (await identity.token(principal.credentialId, principal.workspaceId))?.name ?? null };
    return { actor, workspaceId: principal.workspaceId, ip, userAgent };
  }

  /**
   * A login: a success in the session's workspace; a failure in the default workspace of the account the e-mail
   * names, or (no such account) the first workspace of the instance, so an admin sees attempts on unknown names.
   */
  async login(email: string, ip: string | null, userAgent: string | null, session?: { userId: string; workspaceId: string }): Promise<void> {
    const identity = this.o.storage.identity;
    if (session) {
      const who: AuditContext = { actor: { type: "user", id: session.userId, name: email }, workspaceId: session.workspaceId, ip, userAgent };
      await this.record(who, "login.succeeded", { type: "user", id: session.userId, name: email }, { email });
      return;
    }
    const user = await identity.userByEmail(email);
    const org = user ? null : await identity.firstOrg();
    const workspaceId = user?.default_workspace_id ?? (org ? (await identity.firstWorkspace(org.id))?.id : undefined);
    if (!workspaceId) return;
    const who: AuditContext = { actor: { type: "anonymous", id: null, name: email }, workspaceId, ip, userAgent };
    await this.record(who, "login.failed", { type: "user", id: user?.id ?? null, name: email }, { email });
  }

  /** Stores the action and tells the log stream; a failure to store is thrown (the action already happened). */
  async record(who: AuditContext, action: string, target: AuditTarget | null, details: Record<string, unknown> = {}): Promise<AuditEvent> {
    const row: AuditEventRow = {
      id: newId(),
      created_at: this.now(),
      workspace_id: who.workspaceId,
      actor_type: who.actor.type,
      actor_id: who.actor.id,
      actor_name: who.actor.name,
      action,
      target_type: target?.type ?? null,
      target_id: target?.id ?? null,
      target_name: target?.name ?? null,
      details: JSON.stringify(withoutSecrets(details)),
      ip: who.ip,
      user_agent: who.userAgent,
    };
    await this.o.storage.audit.insert(row);
    const event = eventOf(row);
    this.o.sink.emit(action, streamFields(event), severityOf(action));
    return event;
  }

  async list(filter: AuditFilter, page: { page: number; limit: number; offset: number }) {
    const [rows, total] = await Promise.all([this.o.storage.audit.list(filter, page.limit, page.offset), this.o.storage.audit.count(filter)]);
    return { data: rows.map(eventOf), pagination: { page: page.page, limit: page.limit, total, totalPages: Math.ceil(total / page.limit) } };
  }

  /**
   * Every event the filter matches, newest first, read a page at a time. Events recorded after the export began
   * are left out, so they cannot push a page's rows onto the next one.
   */
  async *export(filter: AuditFilter): AsyncGenerator<AuditEvent> {
    const began = new Date(Date.parse(this.now()) + 1).toISOString();
    filter = { ...filter, to: filter.to !== undefined && filter.to < began ? filter.to : began };
    for (let offset = 0; ; offset += EXPORT_PAGE) {
      const rows = await this.o.storage.audit.list(filter, EXPORT_PAGE, offset);
      for (const row of rows) yield eventOf(row);
      if (rows.length < EXPORT_PAGE) return;
    }
  }

  /** Deletes events older than the retention; answers how many went. */
  async prune(now = this.now()): Promise<number> {
    if (this.o.retentionDays === 0) return 0;
    return this.o.storage.audit.deleteBefore(new Date(Date.parse(now) - this.o.retentionDays * DAY_MS).toISOString());
  }

  /** Prunes every `intervalMs` (the run retention's interval) until stop. */
  start(intervalMs: number, onError: (error: Error) => void): void {
    if (this.timer || this.o.retentionDays === 0) return;
    this.timer = setInterval(() => void this.prune().catch(onError), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * The event as the log stream carries it: flat, with the target's id also under `<type>Id` and its name under
 * `<type>Name` and `name` (`tokenId`, `workflowId`, `workflowName`, … as the stream's consumers read them).
 */
function streamFields(e: AuditEvent): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    auditId: e.id,
    workspaceId: e.workspaceId,
    actorType: e.actor.type,
    actorId: e.actor.id,
    actorName: e.actor.name,
    ip: e.ip,
    userAgent: e.userAgent,
  };
  if (e.target) {
    Object.assign(fields, { targetType: e.target.type, targetId: e.target.id, targetName: e.target.name });
    fields[`${e.target.type}Id`] = e.target.id;
    fields[`${e.target.type}Name`] = e.target.name;
    fields.name = e.target.name;
  }
  return { ...fields, ...e.details };
}
