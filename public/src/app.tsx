/** The shell: auth gate, top navigation, and the page the hash route names. */
import { useEffect } from "preact/hooks";
import { sessionExpired } from "./api";
import { AuthPage } from "./pages/auth-page";
import { InvitePage } from "./pages/invite-page";
import { EditorPage } from "./pages/editor/editor-page";
import { RunDetailPage } from "./pages/run-detail-page";
import { RunsPage } from "./pages/runs-page";
import { SettingsPage } from "./pages/settings-page";
import { ProfilePage } from "./pages/profile-page";
import { SecondFactorSection } from "./pages/second-factor";
import { WorkflowsPage } from "./pages/workflows-page";
import { href, route, startRouter } from "./router";
import { authState, loadSession, logout, me } from "./session";

function Nav() {
  const page = route.value.page;
  const current = (names: string[]) => (names.includes(page) ? "page" : undefined);
  return (
    <header class="topbar">
      <a class="brand" href={href.workflows()}>
        Weft
      </a>
      <nav aria-label="Main">
        <a href={href.workflows()} aria-current={current(["workflows", "editor"])}>
          Workflows
        </a>
        <a href={href.runs()} aria-current={current(["runs", "run"])}>
          Runs
        </a>
        <a href={href.settings()} aria-current={current(["settings"])}>
          Settings
        </a>
      </nav>
      <span class="spacer" />
      <span class="muted small-text">{me.value?.workspace.name}</span>
      {me.value?.user ? (
        <a class="small-text" href={href.profile()} aria-current={current(["profile"])} title="Profile: password and sessions">
          {me.value.user.email}
        </a>
      ) : null}
      <button type="button" class="small" onClick={() => logout()}>
        Log out
      </button>
    </header>
  );
}

function Page() {
  const r = route.value;
  // The workspace requires a second factor this session has not got: only enrolling is open (docs/teams.md).
  if (me.value?.secondFactorMissing)
    return (
      <main class="page">
        <SecondFactorSection />
      </main>
    );
  switch (r.page) {
    case "editor":
      return <EditorPage key={r.id} id={r.id} />;
    case "runs":
      return <RunsPage />;
    case "run":
      return <RunDetailPage key={r.id} id={r.id} />;
    case "settings":
      return <SettingsPage tab={r.tab} />;
    case "profile":
      return <ProfilePage />;
    default:
      return <WorkflowsPage />;
  }
}

export function App() {
  useEffect(() => {
    const stop = startRouter();
    void loadSession().catch(() => {
      authState.value = "login";
    });
    return stop;
  }, []);
  useEffect(() => {
    if (sessionExpired.value && authState.value === "ready") authState.value = "login";
  }, [sessionExpired.value]);
  const state = authState.value;
  // An invitation link is opened before its invitee has an account or a session.
  const r = route.value;
  if (r.page === "invite") return <InvitePage token={r.token} />;
  if (state === "loading")
    return (
      <p class="muted center" role="status">
        Loading…
      </p>
    );
  if (state === "setup" || state === "login") return <AuthPage mode={state} />;
  return (
    <div class="shell">
      {/* biome-ignore lint/a11y/useValidAnchor: a real in-page link; the handler also moves focus into <main>, which a bare #fragment does not */}
      <a
        class="skip"
        href="#main-content"
        onClick={(e) => {
          e.preventDefault();
          const main = document.querySelector<HTMLElement>("main");
          if (main) {
            main.tabIndex = -1;
            main.focus();
          }
        }}
      >
        Skip to content
      </a>
      <Nav />
      <Page />
    </div>
  );
}
