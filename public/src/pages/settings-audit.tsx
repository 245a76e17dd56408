/**
 * Settings → Audit log (docs/teams.md, "Audit log"): who did what, when, from where in this workspace, newest
 * first, filtered by action, actor, target and dates, paged; the same filters export the log as JSON lines.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api, withQuery } from "../api";
import { ErrorNote } from "../components/error-note";
import { Options } from "../components/options";
import { Pager, pagePosition } from "../components/pager";
import { when } from "../format";
import type { AuditEvent } from "../types";
import { useCall } from "../use-call";
import { Table } from "../components/table";
import { submitInPlace } from "../bind";

interface Filters {
  action: string;
  actor: string;
  targetType: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { action: "", actor: "", targetType: "", from: "", to: "" };
const TARGET_TYPES = ["workflow", "connection", "token", "member", "invitation", "user", "settings", "piece"];

/** The filters that are set, as query parameters (dates as typed: the server reads ISO 8601). */
const queryOf = (f: Filters) => Object.fromEntries(Object.entries(f).filter(([, v]) => v.trim() !== ""));

function actorText(actor: AuditEvent["actor"]): string {
  if (actor.type === "token") return `token ${actor.name ?? actor.id ?? "?"}`;
  if (actor.type === "anonymous") return `${actor.name ?? "someone"} (not signed in)`;
  return actor.name ?? actor.id ?? "?";
}

const detailsText = (details: Record<string, unknown>) =>
  Object.entries(details)
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(", ") || "—" : typeof value === "object" ? JSON.stringify(value) : String(value)}`)
    .join("; ");

export function AuditTab() {
  const events = useSignal<AuditEvent[]>([]);
  const pagination = useSignal({ page: 1, limit: 50, total: 0, totalPages: 0 });
  const page = useSignal(1);
  const draft = useSignal<Filters>(NO_FILTERS);
  const filters = useSignal<Filters>(NO_FILTERS);
  const { busy: loading, error, call } = useCall(true);

  useEffect(() => {
    void call(async () => {
      const res = await api.get<AuditEvent[]>("/api/audit", { ...queryOf(filters.value), page: page.value, limit: 50 });
      events.value = res.data;
      if (res.pagination) pagination.value = res.pagination;
    });
  }, [page.value, filters.value]);

  const field = (key: keyof Filters, label: string, placeholder: string, date = false) => {
    const onInput = (e: Event) => {
      draft.value = { ...draft.value, [key]: (e.target as HTMLInputElement).value };
    };
    return date ? (
      <label class="field inline">
        <span>{label}</span>
        <input type="date" value={draft.value[key]} onInput={onInput} />
      </label>
    ) : (
      <label class="field inline">
        <span>{label}</span>
        <input type="text" placeholder={placeholder} value={draft.value[key]} onInput={onInput} />
      </label>
    );
  };

  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <p class="help">
        Who did what, when and from where in this workspace: logins, members and invitations, API tokens, workflows, connections (never their secrets), settings
        and piece packages. Events older than WEFT_AUDIT_RETENTION_DAYS (365 by default) are deleted.
      </p>
      <form
        class="row"
        aria-label="Filter the audit log"
        onSubmit={submitInPlace(() => {
          page.value = 1;
          filters.value = { ...draft.value };
        })}
      >
        {field("action", "Action", "workflow.published")}
        {field("actor", "Actor", "e-mail or token name")}
        <label class="field inline">
          <span>Target</span>
          <select
            value={draft.value.targetType}
            onChange={(e) => {
              draft.value = { ...draft.value, targetType: (e.target as HTMLSelectElement).value };
            }}
          >
            <Options choices={[["", "any"], ...TARGET_TYPES]} />
          </select>
        </label>
        {field("from", "From", "", true)}
        {field("to", "Until", "", true)}
        <button type="submit" class="primary">
          Filter
        </button>
        <a href={withQuery("/api/audit/export", queryOf(filters.value))} download>
          Export (JSON lines)
        </a>
      </form>
      <ErrorNote error={error.value} />
      {!loading.value && events.value.length === 0 && !error.value && <p class="empty">No event matches.</p>}
      {events.value.length > 0 && (
        <Table label="Audit events" columns={["When", "Who", "Action", "On", "Details", "From"]}>
          {events.value.map((e) => (
            <tr key={e.id}>
              <td title={e.time}>{when(e.time)}</td>
              <td>{actorText(e.actor)}</td>
              <td>
                <code>{e.action}</code>
              </td>
              <td>{e.target ? `${e.target.type} ${e.target.name ?? e.target.id ?? ""}` : "—"}</td>
              <td>{detailsText(e.details) || "—"}</td>
              <td title={e.userAgent ?? undefined}>{e.ip ?? "—"}</td>
            </tr>
          ))}
        </Table>
      )}
      <Pager page={page} pages={pagination.value.totalPages} position={pagePosition(pagination.value, "events")} />
    </section>
  );
}
