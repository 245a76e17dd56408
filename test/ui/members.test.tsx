/**
 * Settings → Members (docs/teams.md): a viewer sees the members with every action disabled and the reason; an
 * admin changes a role, invites (the link shown once) and revokes; the invitation page joins with a password.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { ROLES } from "../../src/schema/roles";
import { fakeApi, until, useHappyDom } from "./fake-api";

useHappyDom();

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(() => {
  fake?.restore();
  document.body.innerHTML = "";
});

const roles = Object.entries(ROLES).map(([name, role]) => ({ name, description: role.description, scopes: [...role.scopes], assignable: name !== "owner" }));
const members = [
  { userId: "u-owner", email: "owner@example.com", name: "Olga", role: "owner", status: "active", joinedAt: "2025-01-01T00:00:00Z" },
  { userId: "u-ed", email: "ed@example.com", name: "Ed", role: "editor", status: "active", joinedAt: "2025-01-02T00:00:00Z" },
  { userId: "u-vi", email: "vi@example.com", name: "Vi", role: "viewer", status: "active", joinedAt: "2025-01-03T00:00:00Z" },
];

async function renderAs(role: keyof typeof ROLES, userId: string, routes: Parameters<typeof fakeApi>[0] = {}) {
  const { render, h } = await import("preact");
  const { me } = await import("../../public/src/session");
  const { MembersTab } = await import("../../public/src/pages/settings-members");
  me.value = {
    kind: "session",
    user: { id: userId, email: "x@example.com", name: "X", role: "member", orgId: "o" },
    workspace: { id: "w", orgId: "o", name: "Default workspace", createdAt: "2025-01-01T00:00:00Z" },
    scopes: [...ROLES[role].scopes],
    role,
    memberships: [],
    secondFactorMissing: false,
  };
  fake = fakeApi({
    "GET /api/members": () => ({ body: { data: members, total: members.length } }),
    "GET /api/roles": () => ({ body: { data: roles, total: roles.length } }),
    "GET /api/invitations": () => ({
      body: { data: [{ id: "i1", email: "pending@example.com", role: "operator", expiresAt: "2025-02-01T00:00:00Z" }], total: 1 },
    }),
    ...routes,
  });
  const root = document.createElement("div");
  document.body.appendChild(root);
  render(h(MembersTab, {}), root);
  await until(() => expect(root.querySelectorAll("tr[data-member]").length).toBe(3));
  return root;
}

describe("Settings → Members", () => {
  test("a viewer sees members and roles with their scopes; every action is disabled and says why", async () => {
    const root = await renderAs("viewer", "u-vi");
    const ed = root.querySelector('tr[data-member="ed@example.com"]')!;
    expect((ed.querySelector("select") as HTMLSelectElement).disabled).toBe(true);
    for (const button of ed.querySelectorAll("button")) expect((button as HTMLButtonElement).disabled).toBe(true);
    expect(ed.querySelector(".reason")!.textContent).toBe("needs workspace:admin (roles: owner, admin); your role is viewer");
    const invite = root.querySelector('form[aria-label="Invite a member"] button[type="submit"]') as HTMLButtonElement;
    expect(invite.disabled).toBe(true);
    expect(invite.title).toContain("your role is viewer");
    expect(root.querySelector("[data-invitation]")).toBeNull();
    expect(fake!.calls.some((c) => c.path === "/api/invitations")).toBe(false);
    expect(root.querySelector('tr[data-role="operator"]')!.textContent).toContain("workflow:run");
  });

  test("an admin changes a role, invites and sees the link once, and cannot touch the owner", async () => {
    const root = await renderAs("admin", "u-admin", {
      "PUT /api/members/u-ed/role": (r) => ({ body: { data: { ...members[1], role: r.body.role } } }),
      "POST /api/invitations": (r) => ({
        status: 201,
        body: {
          data: {
            id: "i2",
            email: r.body.email,
            role: r.body.role,
            expiresAt: "2025-02-01T00:00:00Z",
            token: "weft_inv_x",
            link: "http://weft.test/#/invite/weft_inv_x",
            emailed: false,
          },
        },
      }),
    });
    const owner = root.querySelector('tr[data-member="owner@example.com"]')!;
    expect((owner.querySelector("select") as HTMLSelectElement).disabled).toBe(true);
    expect(owner.querySelector(".reason")!.textContent).toContain("transfer of ownership");
    const select = root.querySelector('tr[data-member="ed@example.com"] select') as HTMLSelectElement;
    expect(select.disabled).toBe(false);
    expect([...select.options].map((o) => o.value)).toEqual(["admin", "editor", "operator", "viewer"]);
    select.value = "operator";
    select.dispatchEvent(new Event("change"));
    await until(() => expect(fake!.calls.find((c) => c.method === "PUT")?.body).toEqual({ role: "operator" }));
    expect(root.querySelector('[data-invitation="pending@example.com"]')).not.toBeNull();

    const form = root.querySelector('form[aria-label="Invite a member"]') as HTMLFormElement;
    const email = form.querySelector('input[type="email"]') as HTMLInputElement;
    email.value = "new@example.com";
    email.dispatchEvent(new Event("input"));
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await until(() =>
      expect((root.querySelector('input[aria-label="Invitation link"]') as HTMLInputElement)?.value).toBe("http://weft.test/#/invite/weft_inv_x"),
    );
    expect(fake!.calls.find((c) => c.method === "POST" && c.path === "/api/invitations")!.body).toEqual({ email: "new@example.com", role: "editor" });
    // Only the owner transfers ownership.
    const makeOwner = [...root.querySelectorAll('tr[data-member="ed@example.com"] button')].find((b) => b.textContent === "Make owner") as HTMLButtonElement;
    expect(makeOwner.disabled).toBe(true);
    expect(makeOwner.title).toContain("only the owner");
  });

  test("the invitation page shows what it offers and joins with a new password", async () => {
    const { render, h } = await import("preact");
    const { InvitePage } = await import("../../public/src/pages/invite-page");
    fake = fakeApi({
      "POST /api/invitations/preview": () => ({
        body: {
          data: { email: "new@example.com", role: "operator", workspaceName: "Ops", workspaceId: "w", expiresAt: "2025-02-01T00:00:00Z", hasAccount: false },
        },
      }),
      "POST /api/invitations/accept": () => ({ status: 201, body: { data: { user: { id: "u" }, workspaceId: "w", csrfToken: "c" } } }),
      "GET /api/auth/me": () => ({
        body: { data: { kind: "session", user: null, workspace: { id: "w", name: "Ops" }, scopes: [], role: "operator", memberships: [] } },
      }),
    });
    const root = document.createElement("div");
    document.body.appendChild(root);
    render(h(InvitePage, { token: "weft_inv_x" }), root);
    await until(() => expect(root.textContent).toContain("invited to Ops as operator"));
    const password = root.querySelector('input[type="password"]') as HTMLInputElement;
    password.value = "a long password";
    password.dispatchEvent(new Event("input"));
    (root.querySelector("form") as HTMLFormElement).dispatchEvent(new Event("submit", { cancelable: true }));
    await until(() =>
      expect(fake!.calls.find((c) => c.path === "/api/invitations/accept")?.body).toEqual({ token: "weft_inv_x", password: "a long password" }),
    );
    await until(() => expect(location.hash).toBe("#/workflows"));
  });
});
