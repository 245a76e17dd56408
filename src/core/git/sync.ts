/**
 * Git sync of a workspace (docs/workflows-as-code.md, "Git sync" and "Environments"): its workflows as files
 * (../workflows/files.ts) kept in a branch of a git remote. Pull imports what the branch holds (all or nothing, the
 * import's plan as the report); push exports the workspace into the branch as one commit by the acting user;
 * status says what differs on either side. Never a silent overwrite: a pull that would overwrite changes not pushed
 * yet, and a push that is not a fast-forward, are refused with what to do.
 *
 * A workspace managed by git (its production) takes workflow changes only from pulls: edits are refused (the
 * routes ask `assertEditable`), and a pull publishes what changed, on demand, on a schedule or on a push webhook.
 */
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { Cron } from "croner";
import { AppError } from "../../http/errors";
import { newSecret, safeEqual, sha256 } from "../../lib/ids";
import { type Clock, systemClock } from "../../lib/clock";
import type { GuardedFetch } from "../../pieces-sdk/types";
import type { ClusterChanges } from "../cluster-changes";
import { nowIso } from "../../store/db";
import type { GitSyncRow } from "../../store/git-sync";
import type { Storage } from "../../store/port";
import type { SecretBox } from "../crypto";
import { CONNECTIONS_FILE, connectionsYaml, VARIABLES_DIR, VARIABLES_FILE, variablesYaml, WORKFLOWS_DIR } from "../workflows/files-format";
import type { ImportResult, WorkflowFiles } from "../workflows/files";
import type { Actor, Workflows } from "../workflows/workflows";
import { type Author, GitClone, generateKeyPair, isSsh, RemoteRefusedError, type Remote, transportOf } from "./clone";

export interface GitSettingsInput {
  remoteUrl: string;
  branch?: string;
  folder?: string;
  username?: string | null;
  /** HTTPS token. Omitted: the stored one is kept; null: removed. */
  token?: string | null;
  /** SSH private key (OpenSSH format). Omitted: kept; null: removed. */
  sshKey?: string | null;
  managed?: boolean;
  prune?: boolean;
  schedule?: string | null;
  /** True: a push webhook secret is made (or kept); false: the webhook is off. */
  webhook?: boolean;
}

export interface FileChange {
  path: string;
  change: "added" | "modified" | "deleted";
}

export interface PullResult extends ImportResult {
  commit: string;
  /** The branch had nothing new since the last sync: nothing was imported. */
  upToDate: boolean;
  /** Managed workspaces: the workflows published by this pull, and those whose publish was refused (with why). */
  published: Array<{ id: string; name: string }>;
  notPublished: Array<{ id: string; name: string; message: string }>;
}

export interface GitSyncOptions {
  storage: Storage;
  secrets: SecretBox;
  workflows: Workflows;
  files: WorkflowFiles;
  /** The data directory: clones live in `<dataDir>/git/`. */
  dataDir: string;
  log?: { info(message: string, fields?: Record<string, unknown>): void; warn(message: string, fields?: Record<string, unknown>): void };
  /** This instance's id: in a cluster, a scheduled pull is made by the instance holding its lease. */
  instanceId?: string;
  /** Told of every scheduled or webhook pull (the audit log; routes record their own). */
  onPull?: (workspaceId: string, how: "schedule" | "webhook", result: PullResult | Error) => void | Promise<void>;
  /** The scheduled pull's lease and the commits' time (docs/architecture.md, "Time"); default the system clock. */
  clock?: Clock;
  /** The instance's guarded fetch, asked per call: remotes reach only what pieces may (docs/security.md). */
  fetch: () => GuardedFetch;
  /**
   * A cluster's shared changes: a schedule saved or removed on one instance is announced, and every instance
   * reads it again (and all of them on the cluster's re-read timer), so each keeps every workspace's schedule.
   */
  changes?: ClusterChanges;
}

/** How many entries of each action a plan holds (for the audit log: `{ create: 2, unchanged: 5 }`). */
export function planCounts(plan: ImportResult["plan"]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of plan) out[entry.action] = (out[entry.action] ?? 0) + 1;
  return out;
}

/** The paths of the files Weft writes (relative to the sub-folder): a push replaces these and keeps every other file. */
export const ownedPath = (path: string) => path === CONNECTIONS_FILE || path.startsWith(`${VARIABLES_DIR}/`) || path.startsWith(`${WORKFLOWS_DIR}/`);

/** What an empty workspace exports: a file absent on one side and like this on the other is no change. */
const EMPTY_EXPORT: Record<string, string> = { [CONNECTIONS_FILE]: sha256(connectionsYaml([])), [VARIABLES_FILE]: sha256(variablesYaml(new Map())) };

const BRANCH = /^(?!\/|.*\/\/|.*\.\.|.*\/$|.*\.lock$|.*@\{)[A-Za-z0-9._/-]{1,200}$/;

export class GitSync {
  private readonly turns = new Map<string, Promise<unknown>>();
  private readonly jobs = new Map<string, Cron>();

  /** Between start() and stop(): schedules are kept (and followed from other instances). */
  private started = false;

  constructor(private readonly o: GitSyncOptions) {
    o.changes?.follow(
      "git",
      (change) => (change.id ? this.followSchedule(change.id) : this.followSchedules()),
      () => this.followSchedules(),
    );
  }

  private get storage() {
    return this.o.storage;
  }

  // ------------------------------------------------------------------ settings

  async settings(workspaceId: string) {
    const row = await this.storage.gitSync.get(workspaceId);
    return row ? this.view(row) : null;
  }

  private view(row: GitSyncRow) {
    return {
      remoteUrl: row.remote_url,
      branch: row.branch,
      folder: row.folder,
      username: row.username,
      transport: transportOf(row.remote_url),
      hasToken: row.secret !== null && transportOf(row.remote_url) === "http",
      hasSshKey: row.secret !== null && isSsh(row.remote_url),
      sshPublicKey: isSsh(row.remote_url) ? row.ssh_public_key : null,
      managed: row.managed,
      prune: row.prune,
      schedule: row.schedule,
      webhookPath: row.webhook_secret ? `/api/git/webhook/${row.workspace_id}` : null,
      webhookSecret: row.webhook_secret ? this.o.secrets.decrypt(row.webhook_secret) : null,
      lastCommit: row.last_commit,
      syncedAt: row.synced_at,
      updatedAt: row.updated_at,
    };
  }

  async save(actor: Actor, input: GitSettingsInput) {
    const existing = await this.storage.gitSync.get(actor.workspaceId);
    const url = input.remoteUrl.trim();
    if (!/^(https?:\/\/|ssh:\/\/|git:\/\/|file:\/\/|\/)/i.test(url) && !isSsh(url))
      throw new AppError(
        "VALIDATION_FAILED",
        `remoteUrl "${url}" is not a git remote Weft can reach; allowed: https://host/owner/repo.git (with a token), ssh://… or user@host:path (with a key), git://…, or an absolute local path`,
      );
    if (/^https?:\/\/[^/]*@/i.test(url))
      throw new AppError("VALIDATION_FAILED", "remoteUrl holds credentials; put the token in `token`, where it is stored encrypted");
    const branch = (input.branch ?? existing?.branch ?? "main").trim();
    if (!BRANCH.test(branch)) throw new AppError("VALIDATION_FAILED", `branch "${branch}" is not a branch name; use letters, digits, ".", "_", "-" and "/"`);
    const folder = (input.folder ?? existing?.folder ?? "").trim().replace(/^\/+|\/+$/g, "");
    if (folder.split("/").some((part) => part === "." || part === "..") || /[\\:*?"<>|]/.test(folder))
      throw new AppError("VALIDATION_FAILED", `folder "${folder}" is not a sub-folder of the repository; use a relative path such as "weft" or "envs/prod"`);
    const schedule = input.schedule === undefined ? (existing?.schedule ?? null) : input.schedule?.trim() || null;
    if (schedule) {
      try {
        new Cron(schedule, { paused: true, mode: "5-or-6-parts" }).stop();
      } catch (error) {
        throw new AppError(
          "VALIDATION_FAILED",
          `schedule "${schedule}" is not a cron pattern (${(error as Error).message}); e.g. "*/5 * * * *" for every five minutes`,
        );
      }
    }
    const given = isSsh(url) ? input.sshKey : input.token;
    if (isSsh(url) && input.token) throw new AppError("VALIDATION_FAILED", "an SSH remote authenticates with `sshKey` (or POST /api/git/ssh-key), not a token");
    // A stored token or key is kept only for the same remote: it is never sent to another host.
    const sameRemote = existing?.remote_url === url;
    const secret = given === undefined ? (sameRemote ? (existing?.secret ?? null) : null) : given ? this.o.secrets.encrypt(given) : null;
    const publicKey = given === undefined && sameRemote ? (existing?.ssh_public_key ?? null) : null;
    const webhook =
      input.webhook === false
        ? null
        : input.webhook || existing?.webhook_secret
          ? (existing?.webhook_secret ?? this.o.secrets.encrypt(newSecret("wgh_")))
          : null;
    const row: GitSyncRow = {
      workspace_id: actor.workspaceId,
      remote_url: url,
      branch,
      folder,
      username: input.username === undefined ? (existing?.username ?? null) : input.username?.trim() || null,
      secret,
      ssh_public_key: publicKey,
      managed: input.managed ?? existing?.managed ?? false,
      prune: input.prune ?? existing?.prune ?? false,
      schedule,
      webhook_secret: webhook,
      last_commit: null,
      synced_files: "{}",
      synced_at: null,
      updated_by: actor.userId ?? actor.credentialId,
      updated_at: nowIso(),
    };
    await this.storage.gitSync.put(row);
    // Another remote or branch: what was synced with the old one says nothing of the new one.
    if (existing && (existing.remote_url !== url || existing.branch !== branch || existing.folder !== folder))
      await this.storage.gitSync.markSynced(actor.workspaceId, null, "{}", null);
    this.reschedule(actor.workspaceId, row);
    this.o.changes?.announce({ what: "git", id: actor.workspaceId });
    return (await this.settings(actor.workspaceId))!;
  }

  /**
   * Makes an Ed25519 key pair for an SSH remote with the system `ssh-keygen`: the private key is stored encrypted,
   * the public one answered (and shown in Settings → Git) to be added as a deploy key with write access.
   */
  async generateSshKey(actor: Actor): Promise<{ publicKey: string }> {
    const row = await this.configured(actor.workspaceId);
    if (!isSsh(row.remote_url))
      throw new AppError("VALIDATION_FAILED", `the remote ${row.remote_url} is not an SSH remote (ssh://… or user@host:path); an https remote takes a token`);
    const pair = await generateKeyPair(join(this.o.dataDir, "git", "keys"), `weft-${actor.workspaceId}`);
    await this.storage.gitSync.put({ ...row, secret: this.o.secrets.encrypt(pair.privateKey), ssh_public_key: pair.publicKey, updated_at: nowIso() });
    return { publicKey: pair.publicKey };
  }

  async remove(workspaceId: string) {
    await this.storage.gitSync.delete(workspaceId);
    this.reschedule(workspaceId, null);
    this.o.changes?.announce({ what: "git", id: workspaceId });
  }

  /** Refuses a workflow edit in a workspace managed by git (409 MANAGED_BY_GIT, naming the branch and what to do). */
  async assertEditable(workspaceId: string): Promise<void> {
    const row = await this.storage.gitSync.get(workspaceId);
    if (!row?.managed) return;
    throw new AppError(
      "MANAGED_BY_GIT",
      `this workspace is managed by git: its workflows change only by a pull of branch "${row.branch}" of ${row.remote_url}${row.folder ? ` (folder ${row.folder})` : ""}; make the change where that branch is pushed from, or turn managed off in Settings → Git`,
      { branch: row.branch, remoteUrl: row.remote_url, folder: row.folder },
    );
  }

  // ------------------------------------------------------------------ status, pull, push

  private async configured(workspaceId: string): Promise<GitSyncRow> {
    const row = await this.storage.gitSync.get(workspaceId);
    if (!row) throw new AppError("NOT_FOUND", "git sync is not set up for this workspace; PUT /api/git/settings (Settings → Git) sets the remote and branch");
    return row;
  }

  private remoteOf(row: GitSyncRow): Remote {
    const secret = row.secret ? this.o.secrets.decrypt(row.secret) : null;
    return {
      url: row.remote_url,
      branch: row.branch,
      username: row.username,
      token: isSsh(row.remote_url) ? null : secret,
      privateKey: isSsh(row.remote_url) ? secret : null,
    };
  }

  private cloneOf(workspaceId: string) {
    return new GitClone(join(this.o.dataDir, "git", `${workspaceId}.git`), join(this.o.dataDir, "git", "keys"), this.o.fetch, this.o.clock);
  }

  /** One git operation of a workspace at a time on this instance. */
  private inTurn<T>(workspaceId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(workspaceId) ?? Promise.resolve();
    const turn = previous.catch(() => undefined).then(work);
    this.turns.set(workspaceId, turn);
    void turn.finally(() => this.turns.get(workspaceId) === turn && this.turns.delete(workspaceId)).catch(() => undefined);
    return turn;
  }

  /** The workspace's exported files (only those Weft owns), and each one's digest. */
  private async exported(workspaceId: string) {
    const files = await this.o.files.export(workspaceId);
    const digests: Record<string, string> = {};
    for (const [path, text] of Object.entries(files)) digests[path] = sha256(text);
    return { files, digests };
  }

  /** What differs between two sets of digests, `after` against `before` (files like an empty workspace's count as absent). */
  private changes(before: Record<string, string>, after: Record<string, string>): FileChange[] {
    const out: FileChange[] = [];
    const of = (set: Record<string, string>, path: string) => set[path] ?? EMPTY_EXPORT[path];
    for (const path of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const a = of(before, path);
      const b = of(after, path);
      if (a === b) continue;
      out.push({ path, change: a === undefined ? "added" : b === undefined ? "deleted" : "modified" });
    }
    return out.sort((x, y) => (x.path < y.path ? -1 : 1));
  }

  /**
   * Would a pull lose this local change? Not when the branch holds the same file, nor for connections.yaml (an
   * import only adds connections), nor for a workflow added here unless the pull prunes.
   */
  private wouldOverwrite(change: FileChange, local: Record<string, string>, remote: Record<string, string>, prune: boolean): boolean {
    if (change.path === CONNECTIONS_FILE) return false;
    if ((local[change.path] ?? EMPTY_EXPORT[change.path]) === (remote[change.path] ?? EMPTY_EXPORT[change.path])) return false;
    return !(change.change === "added" && change.path.startsWith(`${WORKFLOWS_DIR}/`) && !prune);
  }

  private async digestsAt(clone: GitClone, commit: string | null, folder: string): Promise<Record<string, string>> {
    if (!commit) return {};
    const out: Record<string, string> = {};
    for (const [path, text] of Object.entries(await clone.files(commit, folder))) if (ownedPath(path)) out[path] = sha256(text);
    return out;
  }

  async status(workspaceId: string) {
    const row = await this.configured(workspaceId);
    return this.inTurn(workspaceId, async () => {
      const clone = this.cloneOf(workspaceId);
      const head = await clone.fetch(this.remoteOf(row));
      const { digests } = await this.exported(workspaceId);
      const localChanges = this.changes(JSON.parse(row.synced_files), digests);
      const behind = head ? await clone.commitsSince(head, row.last_commit) : 0;
      const remoteChanges =
        head && head !== row.last_commit
          ? this.changes(await this.digestsAt(clone, row.last_commit, row.folder), await this.digestsAt(clone, head, row.folder))
          : [];
      return {
        remoteCommit: head,
        lastCommit: row.last_commit,
        /** Commits on the branch since the last sync; null when the branch's history no longer holds the last synced commit (it was rewritten). */
        behind,
        ahead: localChanges.length > 0,
        localChanges,
        remoteChanges,
        managed: row.managed,
      };
    });
  }

  async pull(actor: Actor, options: { dryRun?: boolean; overwriteLocal?: boolean; prune?: boolean } = {}): Promise<PullResult> {
    const row = await this.configured(actor.workspaceId);
    return this.inTurn(actor.workspaceId, async () => {
      const clone = this.cloneOf(actor.workspaceId);
      const head = await clone.fetch(this.remoteOf(row));
      if (!head)
        throw new AppError("NOT_FOUND", `branch "${row.branch}" is not on ${row.remote_url}; push to create it (POST /api/git/push), or check the branch name`);
      const done = { commit: head, published: [], notPublished: [] };
      const upToDate = head === row.last_commit;
      // A managed workspace goes on: what a pull could not publish before (a connection without credentials then) is tried again.
      if (upToDate && !options.overwriteLocal && !row.managed)
        return { ...done, upToDate, dryRun: Boolean(options.dryRun), applied: false, plan: [], warnings: [], secretsToSet: [] };
      const files: Record<string, string> = {};
      const remoteDigests: Record<string, string> = {};
      for (const [path, text] of Object.entries(await clone.files(head, row.folder))) {
        if (!ownedPath(path)) continue;
        files[path] = text;
        remoteDigests[path] = sha256(text);
      }
      const prune = options.prune ?? row.prune;
      const { digests } = await this.exported(actor.workspaceId);
      const local = this.changes(JSON.parse(row.synced_files), digests).filter((change) => this.wouldOverwrite(change, digests, remoteDigests, prune));
      if (local.length > 0 && !options.overwriteLocal)
        throw new AppError(
          "LOCAL_CHANGES",
          `pull refused: ${local.length} file${local.length === 1 ? "" : "s"} changed in this workspace since the last sync and not pushed (${local
            .slice(0, 5)
            .map((c) => c.path)
            .join(
              ", ",
            )}${local.length > 5 ? ", …" : ""}); the pull would overwrite ${local.length === 1 ? "it" : "them"}. Push them first (POST /api/git/push; if the branch moved meanwhile, the push is refused too: keep the changes with an export, then pull with overwriteLocal), or pull with overwriteLocal: true to discard them`,
          { changes: local },
        );
      const result = await this.o.files.import(actor, files, {
        dryRun: options.dryRun,
        prune,
        // A managed workspace resolves connections by name: one it lacks is listed, not created without credentials.
        mayCreateConnections: !row.managed,
      });
      if (result.dryRun) return { ...result, ...done, upToDate };
      const pulled: PullResult = { ...result, ...done, upToDate, published: [], notPublished: [] };
      if (row.managed) await this.publishChanged(actor, pulled);
      // The baseline is what the workspace exports now (a file written by hand exports in Weft's own form), but only
      // for files the branch holds: a workflow this workspace has and the branch lacks stays a change to push.
      const after = await this.exported(actor.workspaceId);
      const synced = Object.fromEntries(Object.entries(after.digests).filter(([path]) => path in files || path in EMPTY_EXPORT));
      await this.storage.gitSync.markSynced(actor.workspaceId, head, JSON.stringify(synced), nowIso());
      return pulled;
    });
  }

  /**
   * A managed workspace runs what its branch holds: each workflow a pull created or updated is published, and so is
   * one left unchanged that is not live or whose draft differs from what runs (a publish refused before).
   */
  private async publishChanged(actor: Actor, result: PullResult) {
    for (const entry of result.plan) {
      if (entry.kind !== "workflow" || !entry.id || entry.action === "delete") continue;
      if (entry.action === "unchanged") {
        const now = await this.o.workflows.get(actor.workspaceId, entry.id);
        if (now.status === "active" && !now.hasUnpublishedChanges) continue;
      }
      try {
        await this.o.workflows.publish(actor, entry.id);
        result.published.push({ id: entry.id, name: entry.name });
      } catch (error) {
        result.notPublished.push({ id: entry.id, name: entry.name, message: (error as Error).message });
      }
    }
  }

  async push(actor: Actor, message: string, author: Author) {
    const row = await this.configured(actor.workspaceId);
    if (row.managed)
      throw new AppError(
        "MANAGED_BY_GIT",
        `this workspace is managed by git (branch "${row.branch}"): it pulls, it does not push; push from the workspace the branch is developed in`,
        { branch: row.branch },
      );
    const text = message.trim();
    if (!text) throw new AppError("VALIDATION_FAILED", "message is empty; say what the commit changes");
    return this.inTurn(actor.workspaceId, async () => {
      const clone = this.cloneOf(actor.workspaceId);
      const remote = this.remoteOf(row);
      const head = await clone.fetch(remote);
      // The commit is made on the branch's head, so it is a fast-forward of it; but commits since the last sync that
      // changed Weft's files would be undone by it: those are refused (commits to other files, a README, are kept).
      const remoteChanges =
        head && head !== row.last_commit
          ? this.changes(await this.digestsAt(clone, row.last_commit, row.folder), await this.digestsAt(clone, head, row.folder))
          : [];
      if (remoteChanges.length > 0) {
        const behind = await clone.commitsSince(head!, row.last_commit);
        throw new AppError(
          "NOT_FAST_FORWARD",
          `push refused: branch "${row.branch}" of ${row.remote_url} has ${behind === null ? "a history this workspace has not synced" : `${behind} commit${behind === 1 ? "" : "s"} this workspace has not pulled`}, changing ${remoteChanges
            .slice(0, 5)
            .map((change) => change.path)
            .join(", ")}${remoteChanges.length > 5 ? ", …" : ""}; the push would undo them. Pull first (POST /api/git/pull), then push`,
          { remoteCommit: head, lastCommit: row.last_commit, remoteChanges },
        );
      }
      const { files, digests } = await this.exported(actor.workspaceId);
      const changes = this.changes(await this.digestsAt(clone, head, row.folder), digests);
      const commit = await clone.commit(head, row.folder, files, ownedPath, text, author);
      if (!commit) {
        await this.storage.gitSync.markSynced(actor.workspaceId, head, JSON.stringify(digests), nowIso());
        return { pushed: false, commit: head, changes: [] as FileChange[] };
      }
      try {
        await clone.push(remote, commit);
      } catch (error) {
        if (!(error instanceof RemoteRefusedError)) throw error;
        throw new AppError(
          "NOT_FAST_FORWARD",
          `push refused by ${row.remote_url}: branch "${row.branch}" moved meanwhile (${error.message.trim()}); pull first (POST /api/git/pull), then push`,
        );
      }
      await this.storage.gitSync.markSynced(actor.workspaceId, commit, JSON.stringify(digests), nowIso());
      return { pushed: true, commit, changes };
    });
  }

  // ------------------------------------------------------------------ schedule and webhook

  /** Starts the pull schedules of every workspace that has one. */
  async start(): Promise<void> {
    this.started = true;
    await this.followSchedules();
  }

  stop(): void {
    this.started = false;
    for (const job of this.jobs.values()) job.stop();
    this.jobs.clear();
  }

  /** Another instance saved or removed a workspace's settings: its schedule as stored now. */
  private async followSchedule(workspaceId: string): Promise<void> {
    const row = await this.storage.gitSync.get(workspaceId);
    if (this.started && (row?.schedule ?? null) !== (this.jobs.get(workspaceId)?.getPattern() ?? null)) this.reschedule(workspaceId, row);
  }

  /** Every workspace's schedule as stored now (at the start, and on a cluster's re-read): only what changed is redone. */
  private async followSchedules(): Promise<void> {
    const rows = await this.storage.gitSync.list();
    if (!this.started) return;
    const stored = new Map(rows.filter((row) => row.schedule).map((row) => [row.workspace_id, row]));
    for (const workspaceId of [...this.jobs.keys()]) if (!stored.has(workspaceId)) this.reschedule(workspaceId, null);
    for (const [workspaceId, row] of stored) if (this.jobs.get(workspaceId)?.getPattern() !== row.schedule) this.reschedule(workspaceId, row);
  }

  private reschedule(workspaceId: string, row: GitSyncRow | null) {
    this.jobs.get(workspaceId)?.stop();
    this.jobs.delete(workspaceId);
    if (!row?.schedule) return;
    this.jobs.set(workspaceId, new Cron(row.schedule, { protect: true, mode: "5-or-6-parts" }, () => void this.scheduled(workspaceId)));
  }

  /** A scheduled pull, by one instance of a cluster at a time (a lease, as polls take one). */
  private async scheduled(workspaceId: string) {
    const lease = `git-pull:${workspaceId}`;
    const owner = this.o.instanceId ?? "this-instance";
    const now = (this.o.clock ?? systemClock).now();
    try {
      if (!(await this.storage.leases.acquire(lease, owner, new Date(now).toISOString(), new Date(now + 10 * 60_000).toISOString()))) return;
    } catch (error) {
      this.o.log?.warn("git pull schedule: no lease", { workspaceId, error: (error as Error).message });
      return;
    }
    try {
      await this.pullAs(workspaceId, "schedule");
    } finally {
      await this.storage.leases.release(lease, owner, new Date().toISOString()).catch(() => undefined);
    }
  }

  /** A pull nobody signed in made (schedule, webhook): told to `onPull`, never thrown. */
  private async pullAs(workspaceId: string, how: "schedule" | "webhook"): Promise<PullResult | Error> {
    let outcome: PullResult | Error;
    try {
      // A pull nobody signed in made runs in the first org (the one of a single-org installation).
      const org = await this.storage.identity.firstOrg();
      const workspace = org ? await this.storage.identity.workspace(workspaceId, org.id) : null;
      if (!workspace) throw new AppError("NOT_FOUND", `workspace ${workspaceId} not found`);
      outcome = await this.pull({ workspaceId, orgId: workspace.org_id, userId: null, credentialId: `git-${how}` });
    } catch (error) {
      outcome = error as Error;
      this.o.log?.warn("git pull failed", { workspaceId, how, error: (error as Error).message });
    }
    await this.o.onPull?.(workspaceId, how, outcome);
    return outcome;
  }

  /**
   * A push webhook from the git host: checked by its HMAC-SHA256 signature of the body (GitHub's
   * X-Hub-Signature-256, Gitea's X-Gitea-Signature, Forgejo's X-Forgejo-Signature) or GitLab's X-Gitlab-Token,
   * all with the secret Settings → Git shows. A push to another branch is acknowledged and ignored.
   */
  async webhook(workspaceId: string, headers: Headers, body: string): Promise<{ pulled: boolean; reason?: string; result?: PullResult }> {
    const row = await this.storage.gitSync.get(workspaceId);
    const refused = new AppError("UNAUTHORIZED", "the webhook's signature does not match the secret in Settings → Git of this workspace");
    if (!row?.webhook_secret) throw refused;
    const secret = this.o.secrets.decrypt(row.webhook_secret);
    const expected = createHmac("sha256", secret).update(body).digest("hex");
    const signed = headers.get("x-hub-signature-256")?.replace(/^sha256=/, "") ?? headers.get("x-gitea-signature") ?? headers.get("x-forgejo-signature");
    const token = headers.get("x-gitlab-token");
    if (!(signed && safeEqual(signed.toLowerCase(), expected)) && !(token && safeEqual(token, secret))) throw refused;
    // Only pushes pull: a host's ping or another event is acknowledged.
    const event = headers.get("x-github-event") ?? headers.get("x-gitea-event") ?? headers.get("x-forgejo-event") ?? headers.get("x-gitlab-event");
    if (event && !/^push( hook)?$/i.test(event)) return { pulled: false, reason: `a ${event} event, not a push` };
    let ref: unknown;
    try {
      ref = (JSON.parse(body) as { ref?: unknown }).ref;
    } catch {
      ref = undefined;
    }
    if (typeof ref === "string" && ref !== `refs/heads/${row.branch}`) return { pulled: false, reason: `a push to ${ref}, not to refs/heads/${row.branch}` };
    const outcome = await this.pullAs(workspaceId, "webhook");
    if (outcome instanceof Error) throw outcome;
    return { pulled: true, result: outcome };
  }
}
