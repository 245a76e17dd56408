/**
 * Profile (`#/profile`, the e-mail in the top bar): the signed-in person's own account — change the password
 * (the other sessions end), and see and end their browser sessions, this one marked (docs/teams.md, "Sessions").
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote, StatusNote } from "../components/error-note";
import { when } from "../format";
import { me } from "../session";
import type { Session } from "../types";
import { SecondFactorSection } from "./second-factor";
import { Table } from "../components/table";
import { bindText } from "../bind";

function PasswordSection({ onChanged }: { onChanged: () => void }) {
  const current = useSignal("");
  const next = useSignal("");
  const busy = useSignal(false);
  const done = useSignal<string | null>(null);
  const error = useSignal<unknown>(null);
  const bind = (field: typeof current) => ({ ...bindText(field), disabled: busy.value });
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <ErrorNote error={error.value} />
      <StatusNote message={done.value} />
      <form
        aria-label="Change password"
        onSubmit={async (event) => {
          event.preventDefault();
          error.value = null;
          done.value = null;
          busy.value = true;
          try {
            const res = await api.post<{ sessionsRevoked: number }>("/api/auth/password", { currentPassword: current.value, newPassword: next.value });
            const ended = res.data.sessionsRevoked;
            done.value = `Password changed.${ended > 0 ? ` ${ended} other session${ended === 1 ? "" : "s"} ended.` : ""}`;
            current.value = "";
            next.value = "";
            onChanged();
          } catch (e) {
            error.value = e;
          } finally {
            busy.value = false;
          }
        }}
      >
        {/* The e-mail, for password managers filling the right account. */}
        <input type="email" autocomplete="username" value={me.value?.user?.email ?? ""} hidden readOnly />
        <label class="field">
          <span>Current password</span>
          <input type="password" autocomplete="current-password" required {...bind(current)} />
        </label>
        <label class="field">
          <span>New password (at least 8 characters)</span>
          <input type="password" autocomplete="new-password" minLength={8} maxLength={200} required {...bind(next)} />
        </label>
        <p class="help">Changing it ends every other session of yours; this one stays signed in.</p>
        <button type="submit" class="primary" disabled={busy.value}>
          Change password
        </button>
      </form>
    </section>
  );
}

function SessionsSection({ reload }: { reload: number }) {
  const sessions = useSignal<Session[] | null>(null);
  const busy = useSignal(false);
  const error = useSignal<unknown>(null);
  const load = async () => {
    try {
      sessions.value = (await api.get<Session[]>("/api/auth/sessions")).data;
    } catch (e) {
      error.value = e;
    }
  };
  useEffect(() => {
    void load();
  }, [reload]);
  const act = async (work: () => Promise<unknown>) => {
    error.value = null;
    busy.value = true;
    try {
      await work();
      await load();
    } catch (e) {
      error.value = e;
    } finally {
      busy.value = false;
    }
  };
  const list = sessions.value;
  const others = list?.filter((s) => !s.current).length ?? 0;
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p class="help">Where you are signed in. Ending a session signs that browser out at once.</p>
      <ErrorNote error={error.value} />
      {list && (
        <Table label="Your sessions" columns={["Browser", "Address", "Last used", "Signed in"]} actions="Actions">
          {list.map((s) => (
            <tr key={s.id} data-session={s.id} data-current={s.current ? "true" : undefined}>
              <td>
                <span class="small-text">{s.userAgent ?? "unknown browser"}</span>
                {s.current && <strong class="small-text"> (this session)</strong>}
              </td>
              <td class="mono">{s.address ?? "—"}</td>
              <td>{when(s.lastSeenAt)}</td>
              <td>{when(s.createdAt)}</td>
              <td>
                {!s.current && (
                  <button
                    type="button"
                    class="small"
                    disabled={busy.value}
                    aria-label={`End session from ${s.userAgent ?? "unknown browser"}, last used ${when(s.lastSeenAt)}`}
                    onClick={() => act(() => api.del(`/api/auth/sessions/${s.id}`))}
                  >
                    End session
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <button type="button" disabled={busy.value || others === 0} onClick={() => act(() => api.post("/api/auth/sessions/revoke-others"))}>
        End all other sessions
      </button>
    </section>
  );
}

export function ProfilePage() {
  const changed = useSignal(0);
  return (
    <main class="page profile">
      <header class="page-head">
        <h1>Profile</h1>
      </header>
      <p class="help">
        {me.value?.user?.name} <span class="muted">{me.value?.user?.email}</span>
      </p>
      <PasswordSection
        onChanged={() => {
          changed.value += 1;
        }}
      />
      <SecondFactorSection />
      <SessionsSection reload={changed.value} />
    </main>
  );
}
