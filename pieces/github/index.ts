/** GitHub: issues in a repository, through an OAuth2 connection (auth.oauth2 with extra authorize parameters). */
import { action, Auth, connectionCheck, definePiece, httpRequest, listOf, Property } from "../../src/pieces-sdk";
import type { DynamicOptionsContext, GuardedFetch, ResolvedAuth } from "../../src/pieces-sdk/types";

const API = "https://api.github.com";
const REPO = /^[\w.-]+\/[\w.-]+$/;

/** GitHub Enterprise Server: the connection's data may carry apiBaseUrl (e.g. https://ghe.example.com/api/v3). */
function apiBase(auth: ResolvedAuth | undefined): string {
  const base = auth?.kind === "oauth2" ? auth.data?.apiBaseUrl : undefined;
  return typeof base === "string" && base ? base.replace(/\/+$/, "") : API;
}

async function github(fetch: GuardedFetch, auth: ResolvedAuth | undefined, path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}) {
  if (auth?.kind !== "oauth2") throw new Error("this step needs a GitHub connection; set its connectionId to an active github connection");
  const method = init.method ?? "GET";
  return httpRequest(fetch, `${apiBase(auth)}${path}`, {
    service: "GitHub",
    method,
    label: `${method} ${path}`,
    headers: {
      accept: "application/vnd.github+json",
      authorization: `Bearer ${auth.accessToken}`,
      "x-github-api-version": "2022-11-28",
      "user-agent": "weft",
    },
    json: init.body,
    signal: init.signal,
  });
}

function repository(config: Record<string, unknown>): string {
  const repo = String(config.repository ?? "").trim();
  if (!REPO.test(repo)) throw new Error(`repository "${repo}" must be owner/name, e.g. octocat/hello-world`);
  return repo;
}

/** An issue as the actions answer it (`issueSummary`), for the editor's sample data. */
const SAMPLE_ISSUE = {
  id: 1,
  number: 42,
  title: "Found a bug",
  state: "open",
  url: "https://github.com/octocat/hello-world/issues/42",
  labels: ["bug"],
  createdAt: "2025-01-06T09:00:00Z",
};

const repositoryProp = () =>
  Property.dropdown({
    displayName: "Repository",
    description: "owner/name",
    required: true,
    refreshers: ["auth"],
    options: async (ctx: DynamicOptionsContext) => {
      const repos = (await github(ctx.fetch, ctx.auth, "/user/repos?per_page=100&sort=updated", { signal: ctx.signal })) as Array<{
        full_name: string;
        private: boolean;
      }>;
      if (!Array.isArray(repos) || repos.length === 0) return { options: [], placeholder: "This account has no repositories" };
      return { options: repos.map((r) => ({ label: r.private ? `${r.full_name} (private)` : r.full_name, value: r.full_name })) };
    },
  });

/** The fields of a GitHub issue (REST API) that the actions read. */
interface GitHubIssue {
  id: number;
  number: number;
  title: string;
  state: string;
  html_url: string;
  labels?: Array<{ name?: string } | string | null>;
  created_at: string;
  /** Present when the "issue" is a pull request. */
  pull_request?: unknown;
}

const issueSummary = (i: GitHubIssue) => ({
  id: i.id,
  number: i.number,
  title: i.title,
  state: i.state,
  url: i.html_url,
  labels: (i.labels ?? []).map((l) => (typeof l === "string" ? l : (l?.name ?? l))),
  createdAt: i.created_at,
});

export default definePiece({
  id: "github",
  name: "GitHub",
  version: "1.0.0",
  icon: "🐙",
  description: "Create and list issues in GitHub repositories",
  auth: Auth.oauth2({
    authorizeUrl: "https://github.com/login/oauth/authorize",
    tokenUrl: "https://github.com/login/oauth/access_token",
    scopes: ["repo"],
    extraAuthorizeParams: { allow_signup: "false", prompt: "select_account" },
  }),
  checkConnection: connectionCheck(async ({ auth, fetch, signal }) => {
    const user = await github(fetch, auth, "/user", { signal });
    return `connected as ${(user as { login?: string } | null)?.login}`;
  }),
  actions: [
    action({
      id: "create_issue",
      name: "Create issue",
      description: "Open an issue in a repository",
      sideEffects: "external",
      props: {
        repository: repositoryProp(),
        title: Property.shortText({ displayName: "Title", required: true, maxLength: 256 }),
        body: Property.longText({ displayName: "Body", description: "Markdown" }),
        labels: Property.array({ displayName: "Labels", items: { type: "string" } }),
        assignees: Property.array({ displayName: "Assignees", description: "GitHub logins", items: { type: "string" } }),
      },
      outputSchema: {
        type: "object",
        properties: {
          id: { type: "integer" },
          number: { type: "integer" },
          title: { type: "string" },
          state: { type: "string" },
          url: { type: "string", format: "uri" },
        },
      },
      sampleData: SAMPLE_ISSUE,
      run: async (ctx) => {
        const repo = repository(ctx.config);
        const title = String(ctx.config.title ?? "").trim();
        if (!title) throw new Error("title is required");
        const payload: Record<string, unknown> = { title };
        if (ctx.config.body) payload.body = String(ctx.config.body);
        const labels = listOf(ctx.config.labels);
        if (labels.length) payload.labels = labels;
        const assignees = listOf(ctx.config.assignees);
        if (assignees.length) payload.assignees = assignees;
        return issueSummary((await github(ctx.fetch, ctx.auth, `/repos/${repo}/issues`, { method: "POST", body: payload, signal: ctx.signal })) as GitHubIssue);
      },
    }),
    action({
      id: "list_issues",
      name: "List issues",
      description: "List a repository's issues (pull requests excluded)",
      sideEffects: "read",
      retry: { maxAttempts: 3, backoffMs: 1000 },
      props: {
        repository: repositoryProp(),
        state: Property.staticDropdown({ displayName: "State", default: "open", options: ["open", "closed", "all"] }),
        labels: Property.shortText({ displayName: "Labels", description: "Comma-separated; issues must have all of them" }),
        limit: Property.integer({ displayName: "Limit", default: 30, min: 1, max: 100 }),
      },
      outputSchema: { type: "object", properties: { issues: { type: "array", items: { type: "object" } }, count: { type: "integer" } } },
      sampleData: { issues: [SAMPLE_ISSUE], count: 1 },
      run: async (ctx) => {
        const repo = repository(ctx.config);
        const state = String(ctx.config.state ?? "open");
        if (!["open", "closed", "all"].includes(state)) throw new Error(`state "${state}" is unknown; use open, closed or all`);
        const limit = Math.min(100, Math.max(1, Number(ctx.config.limit ?? 30) || 30));
        const query = new URLSearchParams({ state, per_page: String(limit) });
        const labels = listOf(ctx.config.labels);
        if (labels.length) query.set("labels", labels.join(","));
        const raw = (await github(ctx.fetch, ctx.auth, `/repos/${repo}/issues?${query}`, { signal: ctx.signal })) as GitHubIssue[];
        const issues = raw.filter((i) => !i.pull_request).map(issueSummary);
        return { issues, count: issues.length };
      },
    }),
  ],
});
