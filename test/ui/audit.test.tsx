/**
 * Settings → Audit log (docs/teams.md, "Audit log"): the events in a table with who, what, on what, details and
 * address; the filters go to GET /api/audit and to the export link; pages move with Next.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeApi, until, useHappyDom } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(() => {
  fake?.restore();
  document.body.innerHTML = "";
});

const event = (n: number, fields: Record<string, unknown> = {}) => ({
  id: `e${n}`,
  time: "2026-11-29T10:00:00.000Z",
  workspaceId: "w",
  actor: { type: "user", id: "u1", name: "owner@example.com" },
  action: "workflow.published",
  target: { type: "workflow", id: `wf${n}`, name: `flow ${n}` },
  details: { version: n },
  ip: "192.0.2.7",
  userAgent: "browser",
  ...fields,
});

describe("Settings → Audit log", () => {
  test("lists events, filters them, links the export with the same filters and pages", async () => {
    const { render, h } = await import("preact");
    const { AuditTab } = await import("../../public/src/pages/settings-audit");
    fake = fakeApi({
      "GET /api/audit": (r) => {
        const page = Number(r.query.get("page") ?? "1");
        const data =
          r.query.get("action") === "login.failed"
            ? [event(9, { action: "login.failed", actor: { type: "anonymous", id: null, name: "mallory@example.com" }, target: null, details: {} })]
            : [event(page * 10 + 1), event(page * 10 + 2, { actor: { type: "token", id: "t1", name: "ci bot" } })];
        return { body: { data, pagination: { page, limit: 50, total: 120, totalPages: 3 } } };
      },
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(AuditTab, {}), root);
    await until(() => expect(root.querySelectorAll("tbody tr").length).toBe(2));
    const first = root.querySelector("tbody tr")!.textContent!;
    for (const text of ["owner@example.com", "workflow.published", "workflow flow 11", "version: 11", "192.0.2.7"]) expect(first).toContain(text);
    expect(root.querySelectorAll("tbody tr")[1]!.textContent).toContain("token ci bot");
    expect(root.querySelector(".pager")!.textContent).toContain("Page 1 of 3 (120 events)");

    const next = [...root.querySelectorAll(".pager button")].find((b) => b.textContent === "Next") as HTMLButtonElement;
    next.click();
    await until(() => expect(root.querySelector("tbody tr")!.textContent).toContain("flow 21"));

    const action = root.querySelector('input[placeholder="workflow.published"]') as HTMLInputElement;
    action.value = "login.failed";
    action.dispatchEvent(new Event("input", { bubbles: true }));
    (root.querySelector('form[aria-label="Filter the audit log"]') as HTMLFormElement).dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    await until(() => expect(root.querySelector("tbody tr")!.textContent).toContain("mallory@example.com (not signed in)"));
    const last = fake.calls.filter((c) => c.path === "/api/audit").at(-1)!;
    expect(last.query.get("action")).toBe("login.failed");
    expect(last.query.get("page")).toBe("1");
    expect(root.querySelector("a[download]")!.getAttribute("href")).toBe("/api/audit/export?action=login.failed");
  });
});
