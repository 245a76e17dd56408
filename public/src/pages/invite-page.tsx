/** An invitation link (#/invite/<token>, docs/teams.md): what it offers, then join with a new or an existing account. */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { when } from "../format";
import { href, navigate } from "../router";
import { acceptInvitation } from "../session";
import type { InvitationPreview } from "../types";
import { useCall } from "../use-call";

export function InvitePage({ token }: { token: string }) {
  const preview = useSignal<InvitationPreview | null>(null);
  const password = useSignal("");
  const name = useSignal("");
  const { busy, error, call } = useCall();
  useEffect(() => {
    void call(async () => {
      preview.value = (await api.post<InvitationPreview>("/api/invitations/preview", { token })).data;
    });
  }, [token]);
  const p = preview.value;
  const submit = (event: Event) => {
    event.preventDefault();
    void call(async () => {
      await acceptInvitation({ token, password: password.value, ...(name.value.trim() ? { name: name.value.trim() } : {}) });
      navigate(href.workflows());
    });
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
