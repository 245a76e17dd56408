/** First start (create the owner account) and login, with its second step when the account has a second factor. */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { finishLogin, login, pendingSecondFactor, setupOwner } from "../session";
import { bindText, setTo } from "../bind";
import { useCall } from "../use-call";

/** The login's second step (docs/teams.md, "Second factor"): the app's code, or one recovery code. */
function SecondStep() {
  const code = useSignal("");
  const recovery = useSignal(false);
  const { busy, error, call } = useCall();
  const submit = (event: Event) => {
    event.preventDefault();
    void call(() => finishLogin(recovery.value ? { recoveryCode: code.value.trim() } : { code: code.value.trim() }));
  };
  return (
    <main class="auth">
      <form class="card stack" onSubmit={submit} aria-labelledby="second-step-title">
        <h1 id="second-step-title">Second factor</h1>
        <p>{recovery.value ? "Give one of your recovery codes; each works once." : "Give the code your authenticator app shows for Weft."}</p>
        <label class="field">
          <span>{recovery.value ? "Recovery code" : "Code"}</span>
          <input
            name={recovery.value ? "recovery-code" : "code"}
            autocomplete="one-time-code"
            inputMode={recovery.value ? "text" : "numeric"}
            required
            {...bindText(code)}
          />
        </label>
        <ErrorNote error={error.value} />
        <button type="submit" class="primary" disabled={busy.value}>
          Continue
        </button>
        <div class="row">
          <button
            type="button"
            class="small"
            onClick={() => {
              recovery.value = !recovery.value;
              code.value = "";
            }}
          >
            {recovery.value ? "Use the app's code" : "Use a recovery code"}
          </button>
          <button type="button" class="small" onClick={setTo(pendingSecondFactor, null)}>
            Start again
          </button>
        </div>
      </form>
    </main>
  );
}

export function AuthPage({ mode }: { mode: "setup" | "login" }) {
  if (mode === "login" && pendingSecondFactor.value) return <SecondStep />;
  return <PasswordPage mode={mode} />;
}

function PasswordPage({ mode }: { mode: "setup" | "login" }) {
  const email = useSignal("");
  const name = useSignal("");
  const password = useSignal("");
  // A refused single sign-on comes back as ?ssoError=<why> (src/api/sso.ts); shown once, then dropped from the address.
  const { busy, error, call } = useCall();
  useEffect(() => {
    const why = new URLSearchParams(window.location.search).get("ssoError");
    if (!why) return;
    error.value = new Error(why);
    window.history.replaceState(null, "", window.location.pathname + window.location.hash);
  }, []);
  // Single sign-on providers (docs/teams.md): each is a link that starts its sign-in.
  const providers = useSignal<Array<{ id: string; name: string; startPath: string }>>([]);
  useEffect(() => {
    if (mode !== "login") return;
    api
      .get<Array<{ id: string; name: string; startPath: string }>>("/api/auth/sso")
      .then((res) => {
        providers.value = res.data;
      })
      .catch(() => undefined);
  }, [mode]);
  const submit = (event: Event) => {
    event.preventDefault();
    void call(() =>
      mode === "setup"
        ? setupOwner({ email: email.value.trim(), password: password.value, ...(name.value.trim() ? { name: name.value.trim() } : {}) })
        : login(email.value.trim(), password.value),
    );
  };
  return (
    <main class="auth">
      <form class="card stack" onSubmit={submit} aria-labelledby="auth-title">
        <h1 id="auth-title">{mode === "setup" ? "Welcome to Weft" : "Log in to Weft"}</h1>
        {mode === "login" && providers.value.length > 0 && (
          <div class="stack" role="group" aria-label="Single sign-on">
            {providers.value.map((p) => (
              <a key={p.id} class="button primary" href={p.startPath}>
                Sign in with {p.name}
              </a>
            ))}
            <p class="help">or with your e-mail and password:</p>
          </div>
        )}
        {mode === "setup" && <p>Create the owner account of this installation. You can add API tokens and workspaces afterwards.</p>}
        <label class="field">
          <span>Email</span>
          <input type="email" name="email" autocomplete="username" required {...bindText(email)} />
        </label>
        {mode === "setup" && (
          <label class="field">
            <span>Your name (optional)</span>
            <input name="name" autocomplete="name" {...bindText(name)} />
          </label>
        )}
        <label class="field">
          <span>Password{mode === "setup" ? " (at least 8 characters)" : ""}</span>
          <input
            type="password"
            name="password"
            autocomplete={mode === "setup" ? "new-password" : "current-password"}
            minLength={mode === "setup" ? 8 : undefined}
            required
            {...bindText(password)}
          />
        </label>
        <ErrorNote error={error.value} />
        <button type="submit" class="primary" disabled={busy.value}>
          {mode === "setup" ? "Create owner account" : "Log in"}
        </button>
        <p class="help">
          The HTTP API is documented at <a href="/api/docs">/api/docs</a>.
        </p>
      </form>
    </main>
  );
}
