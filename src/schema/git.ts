/** Git sync of a workspace (docs/workflows-as-code.md, "Git sync" and "Environments"): settings, status, pull, push. */
import { t } from "elysia";
import { Type } from "@sinclair/typebox";
import { WorkflowFilesImportResult } from "./workflow-record";

const strict = { additionalProperties: false } as const;
const Nullable = <T extends ReturnType<typeof t.String>>(schema: T) => t.Union([schema, t.Null()]);

export const GitSettings = t.Object(
  {
    remoteUrl: t.String(),
    branch: t.String(),
    folder: t.String({ description: "the repository's sub-folder that holds the files; empty for its root" }),
    username: Nullable(t.String()),
    transport: t.Union([t.Literal("http"), t.Literal("system-git")], {
      description: "http: isomorphic-git, no system git needed; system-git: a local path, git:// or SSH, through the system git",
    }),
    hasToken: t.Boolean(),
    hasSshKey: t.Boolean(),
    sshPublicKey: Nullable(
      t.String({ description: "the public half of the key Weft made (POST /api/git/ssh-key): add it to the repository as a deploy key with write access" }),
    ),
    managed: t.Boolean({ description: "workflow edits are refused; pulls publish what changed" }),
    prune: t.Boolean({ description: "pulls delete (and unpublish) the workflows the branch no longer holds" }),
    schedule: Nullable(t.String()),
    webhookPath: Nullable(t.String({ description: "POST here from the git host's push webhook, signed with webhookSecret" })),
    webhookSecret: Nullable(t.String()),
    lastCommit: Nullable(t.String()),
    syncedAt: Nullable(t.String()),
    updatedAt: t.String(),
  },
  { $id: "GitSettings" },
);

export const GitSettingsBody = t.Object(
  {
    remoteUrl: t.String({
      minLength: 1,
      maxLength: 2000,
      description: "https://host/owner/repo.git, ssh://… or user@host:path, git://…, or an absolute local path",
    }),
    branch: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "default main" })),
    folder: t.Optional(t.String({ maxLength: 500 })),
    username: t.Optional(Nullable(t.String({ maxLength: 200 }))),
    token: t.Optional(Nullable(t.String({ maxLength: 10_000, description: "HTTPS token, stored encrypted; omit to keep the stored one, null to remove it" }))),
    sshKey: t.Optional(Nullable(t.String({ maxLength: 20_000, description: "SSH private key (OpenSSH format), stored encrypted" }))),
    managed: t.Optional(t.Boolean()),
    prune: t.Optional(t.Boolean()),
    schedule: t.Optional(Nullable(t.String({ maxLength: 200, description: "cron pattern of scheduled pulls, e.g. */5 * * * *" }))),
    webhook: t.Optional(t.Boolean({ description: "true: a push webhook secret is made (or kept); false: the webhook is off" })),
  },
  strict,
);

const FileChange = t.Object({ path: t.String(), change: t.Union([t.Literal("added"), t.Literal("modified"), t.Literal("deleted")]) });

export const GitStatus = t.Object(
  {
    remoteCommit: Nullable(t.String({ description: "the branch's head on the remote; null when the branch does not exist yet" })),
    lastCommit: Nullable(t.String({ description: "the commit of the last pull or push" })),
    behind: t.Union([Type.Integer(), t.Null()], { description: "commits on the branch since the last sync; null when its history was rewritten" }),
    ahead: t.Boolean({ description: "the workspace has changes not pushed" }),
    localChanges: t.Array(FileChange, { description: "files the workspace changed since the last sync" }),
    remoteChanges: t.Array(FileChange, { description: "files the branch changed since the last sync" }),
    managed: t.Boolean(),
  },
  { $id: "GitStatus" },
);

export const GitPullBody = t.Object(
  {
    dryRun: t.Optional(t.Boolean({ description: "answer the plan and change nothing" })),
    overwriteLocal: t.Optional(t.Boolean({ description: "discard the workspace's changes not pushed (otherwise such a pull is refused)" })),
    prune: t.Optional(t.Boolean({ description: "delete the workflows the branch does not hold; default: the setting" })),
  },
  strict,
);

export const GitPullResult = t.Composite(
  [
    WorkflowFilesImportResult,
    t.Object({
      commit: t.String(),
      upToDate: t.Boolean(),
      published: t.Array(t.Object({ id: t.String(), name: t.String() })),
      notPublished: t.Array(t.Object({ id: t.String(), name: t.String(), message: t.String() })),
    }),
  ],
  { $id: "GitPullResult" },
);

export const GitPushBody = t.Object({ message: t.String({ minLength: 1, maxLength: 5000, description: "the commit message" }) }, strict);

export const GitPushResult = t.Object(
  {
    pushed: t.Boolean({ description: "false when the branch already held what the workspace exports" }),
    commit: Nullable(t.String()),
    changes: t.Array(FileChange),
  },
  { $id: "GitPushResult" },
);

export const GitWebhookResult = t.Object({ pulled: t.Boolean(), reason: t.Optional(t.String()), commit: t.Optional(t.String()) }, { $id: "GitWebhookResult" });

export const GitSshKey = t.Object({ publicKey: t.String() }, { $id: "GitSshKey" });
