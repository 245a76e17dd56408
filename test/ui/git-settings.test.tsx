/**
 * Settings → Git (docs/workflows-as-code.md, "Git sync"): the remote is saved without echoing the token, the status
 * lists what changed on either side, a refused pull shows the server's words (what to do), a pull shows its plan as
 * the report, and a push sends the commit message.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeApi, until, useHappyDom } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(() => {
  fake?.restore();
  document.body.innerHTML = "";
});

const settings = {
  remoteUrl: "https://git.example.test/team/flows.git",
  branch: "main",
  folder: "weft",
  username: null,
  transport: "http",
  hasToken: true,
  hasSshKey: false,
  sshPublicKey: null,
  managed: false,
  prune: false,
  schedule: null,
  webhookPath: null,
  webhookSecret: null,
  lastCommit: "0123456789abcdef",
  syncedAt: "2026-11-29T10:00:00.000Z",
  updatedAt: "2026-11-29T10:00:00.000Z",
};

const button = (root: Element, text: string) => [...root.querySelectorAll("button")].find((b) => b.textContent === text) as HTMLButtonElement;
const type = (input: HTMLInputElement, value: string) => {
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
};

describe("Settings → Git", () => {
  test("save, status, a refused pull, a pull's report, a push", async () => {
    const { render, h } = await import("preact");
    const { GitTab } = await import("../../public/src/pages/settings-git");
    let pulls = 0;
    fake = fakeApi({
      "GET /api/git/settings": () => ({ body: { data: settings } }),
      "PUT /api/git/settings": (r) => ({ body: { data: { ...settings, ...r.body, token: undefined } } }),
      "GET /api/git/status": () => ({
        body: {
          data: {
            remoteCommit: "fedcba9876543210",
            lastCommit: settings.lastCommit,
            behind: 2,
            ahead: true,
            localChanges: [{ path: "workflows/greeter.yaml", change: "modified" }],
            remoteChanges: [{ path: "workflows/report.yaml", change: "added" }],
            managed: false,
          },
        },
      }),
      "POST /api/git/pull": () =>
        ++pulls === 1
          ? {
              status: 409,
              body: {
                error: { code: "LOCAL_CHANGES", message: "pull refused: 1 file changed in this workspace; push them first, or pull with overwriteLocal" },
              },
            }
          : {
              body: {
                data: {
                  dryRun: true,
                  applied: false,
                  upToDate: false,
                  commit: "fedcba9876543210",
                  plan: [{ action: "create", kind: "workflow", name: "Report", path: "workflows/report.yaml" }],
                  warnings: [],
                  secretsToSet: [{ id: "wf_report", workflow: "Report", path: "workflows/report.yaml", name: "apiKey" }],
                  published: [],
                  notPublished: [],
                },
              },
            },
      "POST /api/git/push": () => ({
        body: { data: { pushed: true, commit: "aaaabbbbccccdddd", changes: [{ path: "workflows/greeter.yaml", change: "modified" }] } },
      }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(GitTab, {}), root);
    await until(() => expect((root.querySelector('form[aria-label="Git remote"] input') as HTMLInputElement).value).toBe(settings.remoteUrl));
    expect(root.textContent).toContain("Last synced: 01234567");

    const token = root.querySelector('input[type="password"]') as HTMLInputElement;
    expect(token.value).toBe("");
    type(token, "new-token");
    (root.querySelector('form[aria-label="Git remote"]') as HTMLFormElement).dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    await until(() => expect(root.textContent).toContain("Saved."));
    const saved = fake.calls.find((c) => c.method === "PUT")!;
    expect(saved.body).toMatchObject({ remoteUrl: settings.remoteUrl, branch: "main", folder: "weft", token: "new-token", managed: false });
    expect(token.value).toBe("");

    button(root, "Check status").click();
    await until(() => expect(root.querySelector('[aria-label="Git status"]')?.textContent).toContain("2 commit(s) to pull"));
    const status = root.querySelector('[aria-label="Git status"]')!.textContent!;
    expect(status).toContain("workflows/greeter.yaml modified");
    expect(status).toContain("workflows/report.yaml added");

    button(root, "Pull").click();
    await until(() => expect(root.textContent).toContain("push them first, or pull with overwriteLocal"));
    button(root, "Preview pull").click();
    await until(() => expect(root.querySelector('[aria-label="Pull plan"]')?.textContent).toContain("Report"));
    expect(fake.calls.filter((c) => c.path === "/api/git/pull").at(-1)!.body).toEqual({ dryRun: true });
    expect(root.querySelector('[aria-label="Secrets to set"]')?.textContent).toContain("apiKey of Report (workflows/report.yaml)");

    type(root.querySelector('form[aria-label="Push"] input') as HTMLInputElement, "Ship the greeter");
    (root.querySelector('form[aria-label="Push"]') as HTMLFormElement).dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    await until(() => expect(root.textContent).toContain("Pushed aaaabbbb (1 file(s))."));
    expect(fake.calls.find((c) => c.path === "/api/git/push")!.body).toEqual({ message: "Ship the greeter" });
  });
});
