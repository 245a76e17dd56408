/** An invitation link (#/invite/<token>, docs/teams.md): what it offers, then join with a new or an existing account. */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { when } from "../format";
import { href, navigate } from "../router";
import { acceptInvitation } from "../session";
import type { InvitationPreview } from "../types";

export function InvitePage({ token }: { token: string }) {
  const preview = useSignal<InvitationPreview | null>(null);
  const password = useSignal("");
  const name = useSignal("");
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  useEffect(() => {
    api
      .post<InvitationPreview>("/api/invitations/preview", { token })
      .then((res) => {
        preview.value = res.data;
      })
      .catch((e) => {
        error.value = e;
      });
  }, [token]);
  const p = preview.value;
  const submit = async (event: Event) => {
    event.preventDefault();
    error.value = null;
    busy.value = true;
    try {
      await acceptInvitation({ token, password: password.value, ...(name.value.trim() ? { name: name.value.trim() } : {}) });
      navigate(href.workflows());
    } catch (e) {
      error.value = e;
    } finally {
      busy.value = false;
    }
  };
  return (
    <main class="auth">
      <form class="card stack" onSubmit={submit} aria-labelledby="invite-title">
        <h1 id="invite-title">Join a Weft workspace</h1>
        {p && (
          <p>
            <strong>{p.email}</strong> is invited to <strong>{p.workspaceName}</strong> as <strong>{p.role}</strong> (until {when(p.expiresAt)}).{" "}
            {p.hasAccount ? "Give the password of your account to join." : "Choose a password for your new account."}
          </p>
        )}
        {p && !p.hasAccount && (
          <label class="field">
            <span>Your name (optional)</span>
            <input name="name" autocomplete="name" value={name.value} onInput={(e) => (name.value = (e.target as HTMLInputElement).value)} />
          </label>
        )}
        {p && (
          <label class="field">
            <span>Password{p.hasAccount ? "" : " (at least 8 characters)"}</span>
            <input
              type="password"
              name="password"
              autocomplete={p.hasAccount ? "current-password" : "new-password"}
              minLength={p.hasAccount ? undefined : 8}
              required
              value={password.value}
              onInput={(e) => (password.value = (e.target as HTMLInputElement).value)}
            />
          </label>
        )}
        <ErrorNote error={error.value} />
        {p && (
          <button type="submit" class="primary" disabled={busy.value}>
            Join {p.workspaceName}
          </button>
        )}
      </form>
    </main>
  );
}
