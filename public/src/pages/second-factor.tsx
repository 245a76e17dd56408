/**
 * Second factor (docs/teams.md, "Second factor"): turn on a TOTP authenticator app (the secret and its otpauth:// URI
 * are shown as text; type the secret into the app), see the recovery codes once, get new ones, turn it off; and, for
 * the workspace owner, require a second factor of every member. A section of the profile page (#/profile),
 * and alone when the workspace requires a second factor the session has not got (src/api/middleware/security.ts).
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { when } from "../format";
import { loadSession, me } from "../session";
import type { SecondFactorEnrolment as Enrolment, SecondFactorStatus as Status } from "../types";
import { bindText, submitInPlace } from "../bind";

/** Six digits are a code; anything else is taken for the password. */
const proofOf = (text: string) => (/^\s*\d{6}\s*$/.test(text) ? { code: text.trim() } : { password: text });

function RecoveryCodesNote({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <div class="note" role="status">
      <p>
        <strong>Your recovery codes.</strong> Keep them somewhere safe: each signs you in once when your authenticator app is not at hand. They are shown only
        now.
      </p>
      <ul class="list mono" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <button type="button" class="small" onClick={onDone}>
        I have saved them
      </button>
    </div>
  );
}

function Requirement() {
  const required = useSignal<boolean | null>(null);
  const error = useSignal<unknown>(null);
  useEffect(() => {
    api
      .get<{ required: boolean }>("/api/settings/second-factor")
      .then((res) => {
        required.value = res.data.required;
      })
      .catch((e) => {
        error.value = e;
      });
  }, []);
  if (required.value === null) return <ErrorNote error={error.value} />;
  return (
    <div class="stack">
      <h3>Workspace</h3>
      <label class="check">
        <input
          type="checkbox"
          name="require-second-factor"
          checked={required.value}
          onChange={async (e) => {
            const wanted = (e.target as HTMLInputElement).checked;
            error.value = null;
            try {
              required.value = (await api.put<{ required: boolean }>("/api/settings/second-factor", { required: wanted })).data.required;
            } catch (failure) {
              (e.target as HTMLInputElement).checked = !wanted;
              error.value = failure;
            }
          }}
        />{" "}
        Require a second factor of every member of {me.value?.workspace.name}
      </label>
      <p class="help">
        Members without one can then only turn theirs on before anything else. Sign-ins through single sign-on are not asked: the provider checks its own
        factors.
      </p>
      <ErrorNote error={error.value} />
    </div>
  );
}

export function SecondFactorSection() {
  const status = useSignal<Status | null>(null);
  const enrolment = useSignal<Enrolment | null>(null);
  const codes = useSignal<string[] | null>(null);
  const code = useSignal("");
  const proof = useSignal("");
  const error = useSignal<unknown>(null);
  const load = async () => {
    try {
      status.value = (await api.get<Status>("/api/auth/second-factor")).data;
    } catch (e) {
      error.value = e;
    }
  };
  useEffect(() => {
    void load();
  }, []);
  const act = async (work: () => Promise<void>) => {
    error.value = null;
    try {
      await work();
    } catch (e) {
      error.value = e;
    }
  };
  const s = status.value;
  return (
    <section aria-labelledby="second-factor-title" class="stack">
      <h2 id="second-factor-title">Second factor</h2>
      <p class="help">
        With a second factor on, a password login also asks for the code of an authenticator app (any TOTP app: Aegis, 2FAS, Google Authenticator, 1Password,
        …).
      </p>
      {s?.mustEnrol && (
        <p class="note" role="status">
          {me.value?.workspace.name} requires a second factor: turn yours on to continue.
        </p>
      )}
      <ErrorNote error={error.value} />
      {codes.value && (
        <RecoveryCodesNote
          codes={codes.value}
          onDone={() => {
            codes.value = null;
            // A session that could only enrol is free now: reloaded after the codes were seen (the shell then shows every page).
            if (me.value?.secondFactorMissing) void loadSession();
          }}
        />
      )}
      {s && !s.enabled && !enrolment.value && (
        <div class="row">
          <span>Second factor: off.</span>
          <button
            type="button"
            class="primary"
            onClick={() =>
              act(async () => {
                enrolment.value = (await api.post<Enrolment>("/api/auth/second-factor/enrol")).data;
                code.value = "";
              })
            }
          >
            Turn on
          </button>
        </div>
      )}
      {s && !s.enabled && enrolment.value && (
        <form
          class="card stack"
          aria-label="Confirm the second factor"
          onSubmit={submitInPlace(() =>
            act(async () => {
              codes.value = (await api.post<{ recoveryCodes: string[] }>("/api/auth/second-factor/confirm", { code: code.value.trim() })).data.recoveryCodes;
              enrolment.value = null;
              await load();
            }),
          )}
        >
          <p>Add this account to your authenticator app with the secret below (or the otpauth:// address), then give the code it shows.</p>
          <label class="field">
            <span>Secret</span>
            <input class="mono" readOnly name="totp-secret" value={enrolment.value.secret} onFocus={(e) => (e.target as HTMLInputElement).select()} />
          </label>
          <label class="field">
            <span>otpauth:// address</span>
            <input class="mono" readOnly name="totp-uri" value={enrolment.value.uri} onFocus={(e) => (e.target as HTMLInputElement).select()} />
          </label>
          <label class="field">
            <span>Code from the app</span>
            <input name="totp-code" autocomplete="one-time-code" inputMode="numeric" required {...bindText(code)} />
          </label>
          <div class="row">
            <button type="submit" class="primary">
              Confirm
            </button>
          </div>
        </form>
      )}
      {s?.enabled && (
        <form class="card stack" aria-label="Change the second factor" onSubmit={(event) => event.preventDefault()}>
          <p>
            Second factor: <strong>on</strong> since {when(s.enabledAt)}; {s.recoveryCodesLeft} recovery codes left.
          </p>
          <label class="field">
            <span>A current code, or your password</span>
            <input type="password" name="second-factor-proof" autocomplete="off" {...bindText(proof)} />
          </label>
          <div class="row">
            <button
              type="button"
              onClick={() =>
                act(async () => {
                  codes.value = (
                    await api.post<{ recoveryCodes: string[] }>("/api/auth/second-factor/recovery-codes", proofOf(proof.value))
                  ).data.recoveryCodes;
                  proof.value = "";
                  await load();
                })
              }
            >
              New recovery codes
            </button>
            <button
              type="button"
              class="danger"
              onClick={() =>
                act(async () => {
                  if (
                    s.requiredHere &&
                    !confirm(`${me.value?.workspace.name} requires a second factor: without one you can only turn it on again. Turn it off?`)
                  )
                    return;
                  await api.post("/api/auth/second-factor/disable", proofOf(proof.value));
                  proof.value = "";
                  await load();
                  await loadSession();
                })
              }
            >
              Turn off
            </button>
          </div>
        </form>
      )}
      {me.value?.role === "owner" && !s?.mustEnrol && <Requirement />}
    </section>
  );
}
