/**
 * Settings: API tokens (the raw value is shown once), connections, integrations (piece packages), members
 * (./settings-members.tsx), workspaces, network (./settings-network.tsx), git (./settings-git.tsx).
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { listPieces, pieceDetail } from "../catalog";
import { ConnectionForm } from "../components/connection-form";
import { Dialog } from "../components/dialog";
import { ErrorNote, StatusNote } from "../components/error-note";
import { authorizeConnection, listConnections } from "../connections";
import { StatusBadge, when } from "../format";
import { href } from "../router";
import { me, switchWorkspace } from "../session";
import { IntegrationsTab } from "./settings-integrations";
import { MembersTab } from "./settings-members";
import { AuditTab } from "./settings-audit";
import { NetworkTab } from "./settings-network";
import { SsoTab } from "./settings-sso";
import { useLoadedCall } from "../use-call";
import { GitTab } from "./settings-git";
import { SCOPES } from "../../../src/schema/scopes";
import type { Connection, ConnectionTestResult, PieceDetail, Token, TokenCreated, Workspace } from "../types";
import { Table } from "../components/table";
import { OnceValue } from "../components/once-value";
import { ConfirmButton } from "../components/confirm-button";
import { bindChecked, bindText, setTo, submitInPlace } from "../bind";

function TokensTab() {
  const tokens = useSignal<Token[]>([]);
  const name = useSignal("");
  const all = useSignal(true);
  const scopes = useSignal<string[]>(["workflow:read", "run:read"]);
  const created = useSignal<TokenCreated | null>(null);
  const copied = useSignal(false);
  const load = async () => {
    tokens.value = (await api.get<Token[]>("/api/tokens")).data;
  };
  const { error, act } = useLoadedCall(load);
  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const res = await api.post<TokenCreated>("/api/tokens", { name: name.value.trim(), scopes: all.value ? "all" : scopes.value });
      created.value = res.data;
      copied.value = false;
      name.value = "";
    });
  };
  return (
    <section aria-labelledby="tokens-title">
      <h2 id="tokens-title">API tokens</h2>
      <p class="help">
        Scripts, CI and AI agents call the API with <code>Authorization: Bearer &lt;token&gt;</code>. The raw value is shown once.
      </p>
      <ErrorNote error={error.value} />
      {created.value && (
        <div class="note" role="status">
          <p>
            Token <strong>{created.value.name}</strong> created. Copy it now; it will not be shown again.
          </p>
          <div class="row">
            <OnceValue label="New token value" value={created.value.token} />
            <button
              type="button"
              class="small"
              onClick={async () => {
                try {
                  // This button belongs to the note about the created token, so there is one; the catch below handles the impossible case as before.
                  const shown = created.value;
                  if (!shown) throw new Error("no token to copy");
                  await navigator.clipboard.writeText(shown.token);
                  copied.value = true;
                } catch {
                  (document.querySelector(".token-value") as HTMLInputElement | null)?.select();
                }
              }}
            >
              {copied.value ? "Copied" : "Copy"}
            </button>
            <button type="button" class="small" onClick={setTo(created, null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <Table columns={["Name", "Prefix", "Scopes", "Created", "Last used"]} actions="Actions">
        {tokens.value.map((t) => (
          <tr key={t.id}>
            <td>{t.name}</td>
            <td>
              <code>{t.prefix}…</code>
            </td>
            <td class="small-text">{t.scopes.length >= SCOPES.length ? "all" : t.scopes.join(", ")}</td>
            <td class="small-text">{when(t.createdAt)}</td>
            <td class="small-text">{when(t.lastUsedAt)}</td>
            <td>
              <ConfirmButton
                label={`Revoke ${t.name}`}
                question={`Revoke ${t.name}? Calls with it fail at once.`}
                onConfirm={() => act(() => api.del(`/api/tokens/${t.id}`))}
              >
                Revoke
              </ConfirmButton>
            </td>
          </tr>
        ))}
      </Table>
      <form class="stack card" onSubmit={create} aria-label="New API token">
        <h3>New token</h3>
        <label class="field">
          <span>Name</span>
          <input required {...bindText(name)} />
        </label>
        <label class="check">
          <input type="checkbox" {...bindChecked(all)} /> All scopes
        </label>
        {!all.value && (
          <fieldset class="scopes">
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <label class="check" key={s}>
                <input
                  type="checkbox"
                  checked={scopes.value.includes(s)}
                  onChange={(e) => {
                    scopes.value = (e.target as HTMLInputElement).checked ? [...scopes.value, s] : scopes.value.filter((x) => x !== s);
                  }}
                />{" "}
                {s}
              </label>
            ))}
          </fieldset>
        )}
        <div class="row">
          <button type="submit" class="primary">
            Create token
          </button>
        </div>
      </form>
    </section>
  );
}

function ConnectionsTab() {
  const connections = useSignal<Connection[]>([]);
  const pieces = useSignal<PieceDetail[]>([]);
  const adding = useSignal<PieceDetail | null>(null);
  const choosing = useSignal(false);
  const message = useSignal<string | null>(null);
  const load = async () => {
    connections.value = await listConnections();
  };
  const { error, call, act } = useLoadedCall(load);
  useEffect(() => {
    listPieces()
      .then((list) => Promise.all(list.filter((p) => p.auth).map((p) => pieceDetail(p.id))))
      .then((list) => {
        pieces.value = list;
      })
      .catch(() => undefined);
  }, []);
  const run = (fn: () => Promise<unknown>) => {
    message.value = null;
    return act(fn);
  };
  return (
    <section aria-labelledby="connections-title">
      <h2 id="connections-title">Connections</h2>
      <p class="help">Credentials that steps use to reach your accounts. Secrets are stored encrypted and never shown again.</p>
      <ErrorNote error={error.value} />
      <StatusNote message={message.value} />
      {connections.value.length === 0 && <p class="empty">No connections yet.</p>}
      {connections.value.length > 0 && (
        <Table columns={["Name", "Piece", "Status", "Token expires"]} actions="Actions">
          {connections.value.map((c) => (
            <tr key={c.id}>
              <td>{c.name}</td>
              <td>{c.pieceId}</td>
              <td>
                <StatusBadge status={c.status} />
                {c.statusMessage && <div class="error-text small-text">{c.statusMessage}</div>}
              </td>
              <td class="small-text">{when(c.tokenExpiresAt)}</td>
              <td class="actions">
                {c.authKind === "oauth2" && (
                  <button type="button" class="small" onClick={() => run(() => authorizeConnection(c.id))}>
                    {c.status === "active" ? "Reconnect" : "Connect"}
                  </button>
                )}
                <button
                  type="button"
                  class="small"
                  onClick={() =>
                    run(async () => {
                      const res = await api.post<ConnectionTestResult>(`/api/connections/${c.id}/test`);
                      message.value = `${c.name}: ${res.data.ok ? "works" : "failed"} — ${res.data.message}`;
                    })
                  }
                >
                  Test
                </button>
                <ConfirmButton label={`Delete ${c.name}`} question={`Delete ${c.name}?`} onConfirm={() => run(() => api.del(`/api/connections/${c.id}`))}>
                  Delete
                </ConfirmButton>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <button type="button" class="primary" onClick={setTo(choosing, true)}>
        New connection
      </button>
      {choosing.value && (
        <Dialog
          title="New connection"
          onClose={() => {
            choosing.value = false;
            adding.value = null;
          }}
        >
          {!adding.value && (
            <div class="stack">
              {pieces.value.length === 0 && <p class="muted">No installed piece needs a connection.</p>}
              {pieces.value.map((p) => (
                <button type="button" class="pick" key={p.id} onClick={setTo(adding, p)}>
                  <strong>{p.name}</strong>
                  <span>{p.auth?.kind}</span>
                </button>
              ))}
            </div>
          )}
          {adding.value && (
            <ConnectionForm
              piece={adding.value}
              onCreated={() => {
                choosing.value = false;
                adding.value = null;
                void call(load);
              }}
            />
          )}
        </Dialog>
      )}
    </section>
  );
}

function WorkspacesTab() {
  // A member without workspace:admin sees their memberships, which carry the name only.
  const workspaces = useSignal<Array<Pick<Workspace, "id" | "name">>>([]);
  const name = useSignal("");
  // Listing (and creating) workspaces needs workspace:admin; any member may switch between their own (GET /api/auth/me).
  const admin = me.value?.scopes.includes("workspace:admin") ?? false;
  const load = async () => {
    if (!admin) {
      workspaces.value = (me.value?.memberships ?? []).map((m) => ({ id: m.workspaceId, name: `${m.workspaceName} (${m.role})` }));
      return;
    }
    workspaces.value = (await api.get<Workspace[]>("/api/workspaces")).data;
  };
  const { error, call, act } = useLoadedCall(load);
  const current = me.value?.workspace.id;
  return (
    <section aria-labelledby="workspaces-title">
      <h2 id="workspaces-title">Workspaces</h2>
      <p class="help">Workflows, runs, connections and tokens belong to one workspace.</p>
      <ErrorNote error={error.value} />
      <ul class="list">
        {workspaces.value.map((w) => (
          <li key={w.id} class="row">
            <strong>{w.name}</strong>
            {w.id === current ? (
              <span class="badge status-active">current</span>
            ) : (
              <button
                type="button"
                class="small"
                onClick={() =>
                  call(async () => {
                    await switchWorkspace(w.id);
                    location.hash = href.workflows();
                  })
                }
              >
                Switch to {w.name}
              </button>
            )}
          </li>
        ))}
      </ul>
      <form
        class="row"
        onSubmit={submitInPlace(() =>
          act(async () => {
            await api.post("/api/workspaces", { name: name.value.trim() });
            name.value = "";
          }),
        )}
      >
        <label class="field inline">
          <span>New workspace</span>
          <input required disabled={!admin} {...bindText(name)} />
        </label>
        <button type="submit" disabled={!admin} title={admin ? undefined : `needs workspace:admin; your role is ${me.value?.role ?? "none"}`}>
          Create
        </button>
      </form>
    </section>
  );
}

const TABS = [
  { id: "tokens", label: "API tokens", view: TokensTab },
  { id: "connections", label: "Connections", view: ConnectionsTab },
  { id: "integrations", label: "Integrations", view: IntegrationsTab },
  { id: "members", label: "Members", view: MembersTab },
  { id: "workspaces", label: "Workspaces", view: WorkspacesTab },
  { id: "network", label: "Network", view: NetworkTab },
  { id: "audit", label: "Audit log", view: AuditTab },
  { id: "sso", label: "Single sign-on", view: SsoTab },
  { id: "git", label: "Git", view: GitTab },
];

export function SettingsPage({ tab }: { tab: string }) {
  const active = TABS.find((t) => t.id === tab) ?? TABS[0];
  const View = active.view;
  return (
    <main class="page">
      <header class="page-head">
        <h1>Settings</h1>
      </header>
      <nav class="tabs" aria-label="Settings sections">
        {TABS.map((t) => (
          <a key={t.id} href={href.settings(t.id)} aria-current={t.id === active.id ? "page" : undefined}>
            {t.label}
          </a>
        ))}
      </nav>
      <View />
    </main>
  );
}
