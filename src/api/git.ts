/**
 * Settings → Git (docs/workflows-as-code.md, "Git sync" and "Environments"): the workspace's remote, its status, a
 * pull (the import's plan as the report) and a push (one commit by the caller); and the git host's push webhook,
 * which pulls.
 */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { audited, auditOf } from "./audit";
import { routeOptions } from "./route-options";
import type { Principal } from "../core/identity";
import { planCounts } from "../core/git/sync";
import { readBody } from "../core/triggers/webhook-request";
import { Data } from "../schema/common";
import { GitPullBody, GitPullResult, GitPushBody, GitPushResult, GitSettings, GitSettingsBody, GitSshKey, GitStatus, GitWebhookResult } from "../schema/git";

const tags = ["Settings"];
const route = routeOptions(tags);

export const gitApi = ({ security, gitSync, audit, storage, config }: AppDeps) => {
  /** The commit's author: the signed-in user, or the token's name for a token (docs/workflows-as-code.md, "Git sync"). */
  const authorOf = async (auth: Principal) => {
    const user = auth.userId ? await storage.identity.user(auth.userId) : null;
    if (user) return { name: user.name || user.email, email: user.email };
    const token = await storage.identity.token(auth.credentialId, auth.workspaceId);
    return { name: token?.name ?? "Weft", email: `weft@${new URL(config.publicUrl).hostname}` };
  };
  return new Elysia({ name: "api-git" })
    .use(security)
    .get("/api/git/settings", async ({ auth }) => ({ data: await gitSync.settings(auth.workspaceId) }), {
      permission: "workspace:admin",
      ...route.answer(t.Union([GitSettings, t.Null()]), "The workspace's git sync settings (null when not set up); the token is never answered"),
    })
    .put(
      "/api/git/settings",
      async (ctx) => {
        const data = await gitSync.save(ctx.auth, ctx.body);
        return audited(
          audit,
          ctx,
          data,
          "git.settings_changed",
          { type: "git", id: ctx.auth.workspaceId, name: data.remoteUrl },
          {
            branch: data.branch,
            folder: data.folder,
            managed: data.managed,
          },
        );
      },
      {
        permission: "workspace:admin",
        ...route.answer(GitSettings, {
          summary: "Set the workspace's git remote, branch and sub-folder (token or key stored encrypted), managed mode, pull schedule and push webhook",
          description:
            "An https remote is reached by isomorphic-git with the token as the password; a local path, git:// and SSH remotes need the system git (a clear 503 GIT_UNAVAILABLE when it is missing). Changing the remote, branch or folder forgets what was last synced. managed: workflow edits are refused (409 MANAGED_BY_GIT) and pulls publish what changed.",
        }),
        body: GitSettingsBody,
      },
    )
    .delete(
      "/api/git/settings",
      async (ctx) => {
        await gitSync.remove(ctx.auth.workspaceId);
        return audited(audit, ctx, { deleted: true }, "git.settings_removed", { type: "git", id: ctx.auth.workspaceId });
      },
      {
        permission: "workspace:admin",
        ...route.answer(t.Object({ deleted: t.Boolean() }), "Stop syncing the workspace with git (its clone stays until the next set-up)"),
      },
    )
    .post(
      "/api/git/ssh-key",
      async (ctx) => {
        const data = await gitSync.generateSshKey(ctx.auth);
        return audited(audit, ctx, data, "git.ssh_key_generated", { type: "git", id: ctx.auth.workspaceId });
      },
      {
        permission: "workspace:admin",
        ...route.answer(GitSshKey, {
          summary: "Make a new SSH key for the workspace's SSH remote: the private key is stored encrypted, the public key answered to add as a deploy key",
          description:
            "Needs the system ssh-keygen and, to use the remote, git and ssh (Debian: git, openssh-client): 503 GIT_UNAVAILABLE names them when missing.",
        }),
      },
    )
    .get("/api/git/status", async ({ auth }) => ({ data: await gitSync.status(auth.workspaceId) }), {
      permission: "workflow:read",
      ...route.answer(GitStatus, "Fetch the branch and say what differs: commits behind, files changed here and on the branch since the last sync"),
    })
    .post(
      "/api/git/pull",
      async (ctx) => {
        const data = await gitSync.pull(ctx.auth, ctx.body);
        if (!data.dryRun && (!data.upToDate || data.published.length > 0))
          await auditOf(
            audit,
            ctx,
            "git.pulled",
            { type: "git", id: ctx.auth.workspaceId },
            { commit: data.commit, plan: planCounts(data.plan), published: data.published.length },
          );
        return { data };
      },
      {
        permission: "workspace:admin",
        ...route.answer(GitPullResult, {
          summary: "Pull: import what the branch holds, all or nothing, with the plan as the report",
          description:
            "Refused with 409 LOCAL_CHANGES (details.changes lists the files) when the workspace changed since the last sync and the branch moved: push first, or pull with overwriteLocal. Problems in the files answer 400 VALIDATION_FAILED with every one in details.problems, and nothing changes; in a managed workspace a connection the branch names and the workspace lacks is one. A managed workspace publishes each workflow the pull created or updated. secretsToSet lists the secret variables the branch names that this workspace holds no value for (stored empty; a dry run lists them before anything changes).",
        }),
        body: GitPullBody,
      },
    )
    .post(
      "/api/git/push",
      async (ctx) => {
        const data = await gitSync.push(ctx.auth, ctx.body.message, await authorOf(ctx.auth));
        if (data.pushed)
          await auditOf(audit, ctx, "git.pushed", { type: "git", id: ctx.auth.workspaceId }, { commit: data.commit, files: data.changes.length });
        return { data };
      },
      {
        permission: "workspace:admin",
        ...route.answer(GitPushResult, {
          summary: "Push: export the workspace into the branch as one commit by the caller",
          description:
            "Refused with 409 NOT_FAST_FORWARD when the branch has commits this workspace has not pulled (pull first), and with 409 MANAGED_BY_GIT in a managed workspace. Files of the repository outside connections.yaml, variables/ and workflows/ (of the sub-folder) are kept.",
        }),
        body: GitPushBody,
      },
    )
    .post(
      "/api/git/webhook/:workspaceId",
      async ({ params, request, body }) => {
        const outcome = await gitSync.webhook(params.workspaceId, request.headers, body as string);
        return { data: { pulled: outcome.pulled, reason: outcome.reason, commit: outcome.result?.commit } };
      },
      {
        permission: "public",
        params: t.Object({ workspaceId: t.String({ minLength: 1, maxLength: 100 }) }),
        parse: async ({ request }) => new TextDecoder().decode(await readBody(request, config.bodyLimit)),
        response: Data(GitWebhookResult),
        detail: {
          tags,
          summary: "The git host's push webhook: pulls the branch (signed with the secret of Settings → Git)",
          description:
            "GitHub (X-Hub-Signature-256), Gitea (X-Gitea-Signature) and Forgejo (X-Forgejo-Signature) sign the body with HMAC-SHA256; GitLab sends the secret as X-Gitlab-Token. A push to another branch is acknowledged and not pulled. A bad signature answers 401.",
        },
      },
    );
};
