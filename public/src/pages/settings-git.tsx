/**
 * Settings → Git (docs/workflows-as-code.md, "Git sync" and "Environments"): the workspace's remote, branch,
 * sub-folder and token (or SSH key), whether git manages it; its status against the branch; a pull (dry run or for
 * real, the plan shown as the report) and a push with a commit message. Refusals (changes not pushed, a branch that
 * moved) are shown with the server's words, which say what to do.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote, StatusNote } from "../components/error-note";
import { when } from "../format";
import { href } from "../router";
import type { GitPullResult as PullResult, GitPushResult, GitSettings, GitStatus } from "../types";
import { Table } from "../components/table";
import { submitInPlace } from "../bind";

type FileChange = GitStatus["localChanges"][number];

const short = (commit: string | null) => (commit ? commit.slice(0, 8) : "none");
const isSsh = (url: string) => /^ssh:\/\//i.test(url) || /^[\w.-]+@[\w.-]+:/.test(url);

function Changes({ title, changes }: { title: string; changes: FileChange[] }) {
  if (changes.length === 0) return null;
  return (
    <div>
      <h4>{title}</h4>
      <ul class="git-changes">
        {changes.map((c) => (
          <li key={c.path}>
            <code>{c.path}</code> {c.change}
          </li>
        ))}
      </ul>
    </div>
  );
}

function PullReport({ result }: { result: PullResult }) {
  if (result.upToDate && result.published.length === 0 && result.notPublished.length === 0)
    return <p role="status">Already up to date with {short(result.commit)}: nothing to pull.</p>;
  const changed = result.plan.filter((entry) => entry.action !== "unchanged");
  return (
    <div role="status" aria-label="Pull report">
      <p>
        {result.dryRun ? "A pull would apply" : "Pulled"} {short(result.commit)}: {changed.length === 0 ? "no change." : `${changed.length} change(s).`}
      </p>
      {result.plan.length > 0 && (
        <Table label="Pull plan" columns={["Action", "Kind", "Name", "File"]}>
          {result.plan.map((entry) => (
            <tr key={`${entry.kind}-${entry.name}-${entry.path ?? ""}`}>
              <td>{entry.action}</td>
              <td>{entry.kind}</td>
              <td>{entry.name}</td>
              <td>{entry.path ? <code>{entry.path}</code> : ""}</td>
            </tr>
          ))}
        </Table>
      )}
      {result.published.length > 0 && <p>Published: {result.published.map((w) => w.name).join(", ")}</p>}
      {result.notPublished.map((w) => (
        <p key={w.id} class="error">
          Not published: {w.name}: {w.message}
        </p>
      ))}
      {(result.secretsToSet ?? []).length > 0 && (
        <section aria-label="Secrets to set">
          <p>{result.dryRun ? "Secret variables this workspace has no value for (they would be stored empty):" : "Secret variables stored empty, to set:"}</p>
          <ul>
            {result.secretsToSet!.map((v) => (
              <li key={`${v.id}-${v.name}`}>
                <code>{v.name}</code> of <a href={href.editor(v.id)}>{v.workflow}</a> (<code>{v.path}</code>)
              </li>
            ))}
          </ul>
        </section>
      )}
      {result.warnings.map((w) => (
        <p key={`${w.file}-${w.path}`} class="help">
          {w.file} {w.path}: {w.message}
        </p>
      ))}
    </div>
  );
}

export function GitTab() {
  const settings = useSignal<GitSettings | null>(null);
  const loaded = useSignal(false);
  const form = useSignal({ remoteUrl: "", branch: "main", folder: "", token: "", managed: false, prune: false, schedule: "", webhook: false });
  const status = useSignal<GitStatus | null>(null);
  const report = useSignal<PullResult | null>(null);
  const message = useSignal("");
  const done = useSignal<string | null>(null);
  const busy = useSignal(false);
  const error = useSignal<unknown>(null);

  const show = (s: GitSettings | null) => {
    settings.value = s;
    if (s)
      form.value = {
        remoteUrl: s.remoteUrl,
        branch: s.branch,
        folder: s.folder,
        token: "",
        managed: s.managed,
        prune: s.prune,
        schedule: s.schedule ?? "",
        webhook: s.webhookPath !== null,
      };
  };
  useEffect(() => {
    api
      .get<GitSettings | null>("/api/git/settings")
      .then((res) => show(res.data))
      .catch((e) => {
        error.value = e;
      })
      .finally(() => {
        loaded.value = true;
      });
  }, []);

  /** Runs one action, showing its error (the server's message says what to do) or `after`. */
  const act = async (work: () => Promise<string | null>) => {
    error.value = null;
    done.value = null;
    busy.value = true;
    try {
      done.value = await work();
    } catch (e) {
      error.value = e;
    } finally {
      busy.value = false;
    }
  };
  const f = form.value;
  const set = (field: keyof typeof f, value: string | boolean) => {
    form.value = { ...form.value, [field]: value };
  };
  const s = settings.value;
  const st = status.value;

  return (
    <section aria-labelledby="git-title">
      <h2 id="git-title">Git</h2>
      <p class="help">
        Keep this workspace's workflows as YAML files in a git branch: push commits them with your name, pull imports what the branch holds (all or nothing).
        Neither overwrites work the other side has not seen: such a pull or push is refused, and the message says what to do.
      </p>
      <ErrorNote error={error.value} />
      <StatusNote message={done.value} />
      {s?.managed && (
        <p class="note" role="note">
          <strong>Managed by git:</strong> workflows here change only by a pull of branch <code>{s.branch}</code>; edits are refused.
        </p>
      )}
      <form
        aria-label="Git remote"
        onSubmit={submitInPlace(() =>
          act(async () => {
            const f = form.value;
            const body: Record<string, unknown> = {
              remoteUrl: f.remoteUrl.trim(),
              branch: f.branch.trim() || "main",
              folder: f.folder.trim(),
              managed: f.managed,
              prune: f.prune,
              schedule: f.schedule.trim() || null,
              webhook: f.webhook,
            };
            if (f.token) body.token = f.token;
            show((await api.put<GitSettings>("/api/git/settings", body)).data);
            return "Saved.";
          }),
        )}
      >
        <label class="field">
          <span>Remote</span>
          <input
            required
            class="mono"
            placeholder="https://git.example.com/team/workflows.git"
            value={f.remoteUrl}
            onInput={(e) => set("remoteUrl", (e.target as HTMLInputElement).value)}
          />
        </label>
        <div class="row">
          <label class="field inline">
            <span>Branch</span>
            <input class="mono" value={f.branch} onInput={(e) => set("branch", (e.target as HTMLInputElement).value)} />
          </label>
          <label class="field inline">
            <span>Folder in the repository</span>
            <input class="mono" placeholder="(the root)" value={f.folder} onInput={(e) => set("folder", (e.target as HTMLInputElement).value)} />
          </label>
        </div>
        {!isSsh(f.remoteUrl) && (
          <label class="field">
            <span>Token{s?.hasToken ? " (stored; leave empty to keep it)" : ""}</span>
            <input type="password" autoComplete="off" value={f.token} onInput={(e) => set("token", (e.target as HTMLInputElement).value)} />
          </label>
        )}
        <label class="check">
          <input type="checkbox" checked={f.managed} onChange={(e) => set("managed", (e.target as HTMLInputElement).checked)} /> Managed by git (production):
          refuse edits, publish what a pull changes
        </label>
        <label class="check">
          <input type="checkbox" checked={f.prune} onChange={(e) => set("prune", (e.target as HTMLInputElement).checked)} /> Pulls delete the workflows the
          branch no longer holds
        </label>
        <div class="row">
          <label class="field inline">
            <span>Pull on a schedule (cron)</span>
            <input class="mono" placeholder="*/5 * * * *" value={f.schedule} onInput={(e) => set("schedule", (e.target as HTMLInputElement).value)} />
          </label>
          <label class="check">
            <input type="checkbox" checked={f.webhook} onChange={(e) => set("webhook", (e.target as HTMLInputElement).checked)} /> Pull on a push webhook
          </label>
        </div>
        <button type="submit" class="primary" disabled={busy.value}>
          Save
        </button>
      </form>
      {s && isSsh(s.remoteUrl) && (
        <div>
          <h3>SSH key</h3>
          {s.sshPublicKey ? (
            <p>
              Add this public key to the repository as a deploy key with write access: <code class="mono">{s.sshPublicKey}</code>
            </p>
          ) : (
            <p class="help">No key yet.</p>
          )}
          <button
            type="button"
            disabled={busy.value}
            onClick={() =>
              act(async () => {
                const { publicKey } = (await api.post<{ publicKey: string }>("/api/git/ssh-key")).data;
                settings.value = { ...s, hasSshKey: true, sshPublicKey: publicKey };
                return "A new key was made; add its public half to the repository.";
              })
            }
          >
            Make a new key
          </button>
        </div>
      )}
      {s?.webhookPath && (
        <p class="help">
          Push webhook: <code>{`${location.origin}${s.webhookPath}`}</code>, content type JSON, secret <code>{s.webhookSecret}</code> (GitHub, Gitea and Forgejo
          sign with it; GitLab sends it as its token).
        </p>
      )}
      {s && (
        <div>
          <h3>Status</h3>
          <p>
            Last synced: {short(s.lastCommit)}
            {s.syncedAt ? `, ${when(s.syncedAt)}` : ""}
          </p>
          <button
            type="button"
            disabled={busy.value}
            onClick={() =>
              act(async () => {
                status.value = (await api.get<GitStatus>("/api/git/status")).data;
                return null;
              })
            }
          >
            Check status
          </button>
          {st && (
            <div role="status" aria-label="Git status">
              <p>
                Branch head {short(st.remoteCommit)}: {st.behind === null ? "its history was rewritten" : `${st.behind} commit(s) to pull`};{" "}
                {st.ahead ? "changes here not pushed" : "nothing here to push"}.
              </p>
              <Changes title="Changed here" changes={st.localChanges} />
              <Changes title="Changed on the branch" changes={st.remoteChanges} />
            </div>
          )}
          <h3>Pull</h3>
          <div class="row">
            <button
              type="button"
              disabled={busy.value}
              onClick={() =>
                act(async () => {
                  report.value = (await api.post<PullResult>("/api/git/pull", { dryRun: true })).data;
                  return null;
                })
              }
            >
              Preview pull
            </button>
            <button
              type="button"
              class="primary"
              disabled={busy.value}
              onClick={() =>
                act(async () => {
                  report.value = (await api.post<PullResult>("/api/git/pull", {})).data;
                  return null;
                })
              }
            >
              Pull
            </button>
          </div>
          {report.value && <PullReport result={report.value} />}
          {!s.managed && (
            <form
              aria-label="Push"
              onSubmit={submitInPlace(() =>
                act(async () => {
                  const res = (await api.post<GitPushResult>("/api/git/push", { message: message.value.trim() })).data;
                  message.value = "";
                  return res.pushed
                    ? `Pushed ${short(res.commit)} (${res.changes.length} file(s)).`
                    : "Nothing to push: the branch already holds this workspace.";
                }),
              )}
            >
              <h3>Push</h3>
              <label class="field">
                <span>Commit message</span>
                <input required value={message.value} onInput={(e) => (message.value = (e.target as HTMLInputElement).value)} />
              </label>
              <button type="submit" class="primary" disabled={busy.value}>
                Push
              </button>
            </form>
          )}
        </div>
      )}
      {loaded.value && !s && <p class="empty">Not synced with git yet: set a remote above.</p>}
    </section>
  );
}
