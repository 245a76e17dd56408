/**
 * Settings → Members (docs/teams.md): the workspace's members and their roles, invitations (the link is shown
 * once), deactivation, removal and ownership transfer. What the caller's role cannot do is shown disabled with
 * the reason, as the API would refuse it.
 */
import { useSignal } from "@preact/signals";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { when } from "../format";
import { me } from "../session";
import type { Invitation, InvitationCreated, Member, Role } from "../types";
import { useLoadedCall } from "../use-call";
import { Table } from "../components/table";
import { OnceValue } from "../components/once-value";
import { ConfirmButton } from "../components/confirm-button";
import { bindSelect, bindText, submitInPlace } from "../bind";

/** A role select's options, one per role given. */
const roleOptions = (list: Role[]) =>
  list.map((r) => (
    <option key={r.name} value={r.name}>
      {r.name}
    </option>
  ));

const ADMIN_SCOPE = "workspace:admin";

type Caller = { userId: string | null; role: string | null; scopes: string[] };

/** Why the caller cannot manage members at all (null: they can). */
export function adminNeeded(caller: Caller, roles: Role[]): string | null {
  if (caller.scopes.includes(ADMIN_SCOPE)) return null;
  const allowing = roles.filter((r) => r.scopes.includes(ADMIN_SCOPE)).map((r) => r.name);
  return `needs ${ADMIN_SCOPE} (roles: ${allowing.join(", ")}); your role is ${caller.role ?? "none"}`;
}

/** Why the caller cannot act on `member` (null: they can). The API refuses the same cases. */
export function whyNot(member: Member, caller: Caller, roles: Role[]): string | null {
  return adminNeeded(caller, roles) ?? (member.role === "owner" ? "the owner's membership changes only by a transfer of ownership" : null);
}

export function MembersTab() {
  const members = useSignal<Member[]>([]);
  const roles = useSignal<Role[]>([]);
  const invitations = useSignal<Invitation[]>([]);
  const created = useSignal<InvitationCreated | null>(null);
  const email = useSignal("");
  const role = useSignal("editor");
  const caller: Caller = {
    userId: me.value?.user?.id ?? null,
    role: me.value?.role ?? null,
    scopes: me.value?.scopes ?? [],
  };
  const isAdmin = caller.scopes.includes(ADMIN_SCOPE);
  const load = async () => {
    const [m, r] = await Promise.all([api.get<Member[]>("/api/members"), api.get<Role[]>("/api/roles")]);
    members.value = m.data;
    roles.value = r.data;
    if (isAdmin) invitations.value = (await api.get<Invitation[]>("/api/invitations")).data;
  };
  const { error, act } = useLoadedCall(load);
  const adminReason = adminNeeded(caller, roles.value);
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <p class="help">
        Who works in this workspace and with which role. Your role: <strong>{caller.role ?? "—"}</strong>.
      </p>
      <ErrorNote error={error.value} />
      <Table columns={["Member", "Role", "Status", "Joined"]} actions="Actions">
        {members.value.map((m) => {
          const reason = whyNot(m, caller, roles.value);
          const self = m.userId === caller.userId;
          return (
            <tr key={m.userId} data-member={m.email}>
              <td>
                {m.name} <span class="muted small-text">{m.email}</span>
              </td>
              <td>
                <select
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  disabled={reason !== null}
                  title={reason ?? undefined}
                  onChange={(e) => {
                    const next = (e.target as HTMLSelectElement).value;
                    void act(() => api.put(`/api/members/${m.userId}/role`, { role: next }));
                  }}
                >
                  {roleOptions(roles.value.filter((r) => r.assignable || r.name === m.role))}
                </select>
              </td>
              <td>{m.status}</td>
              <td class="small-text">{when(m.joinedAt)}</td>
              <td class="actions">
                {m.status === "active" ? (
                  <button
                    type="button"
                    class="small"
                    disabled={reason !== null || self}
                    title={reason ?? (self ? "you cannot deactivate yourself" : undefined)}
                    onClick={() => act(() => api.post(`/api/members/${m.userId}/deactivate`))}
                  >
                    Deactivate
                  </button>
                ) : (
                  <button
                    type="button"
                    class="small"
                    disabled={reason !== null}
                    title={reason ?? undefined}
                    onClick={() => act(() => api.post(`/api/members/${m.userId}/activate`))}
                  >
                    Re-activate
                  </button>
                )}
                <ConfirmButton
                  disabled={reason !== null || self}
                  title={reason ?? (self ? "you cannot remove yourself" : undefined)}
                  question={`Remove ${m.email} from this workspace? What they built stays.`}
                  onConfirm={() => act(() => api.del(`/api/members/${m.userId}`))}
                >
                  Remove
                </ConfirmButton>
                {m.role !== "owner" && (
                  <button
                    type="button"
                    class="small"
                    disabled={caller.role !== "owner" || m.status !== "active"}
                    title={caller.role !== "owner" ? `only the owner can transfer ownership; your role is ${caller.role ?? "none"}` : undefined}
                    onClick={() => {
                      if (confirm(`Make ${m.email} the owner? You become admin.`)) void act(() => api.post(`/api/members/${m.userId}/ownership`));
                    }}
                  >
                    Make owner
                  </button>
                )}
                {reason && <div class="muted small-text reason">{reason}</div>}
              </td>
            </tr>
          );
        })}
      </Table>

      <h3>Invite</h3>
      {created.value && (
        <div class="note" role="status">
          <p>
            Invitation for <strong>{created.value.email}</strong> ({created.value.role}) {created.value.emailed ? "sent by e-mail" : "made"}. Copy the link now;
            it will not be shown again. It works once, until {when(created.value.expiresAt)}.
          </p>
          <OnceValue label="Invitation link" value={created.value.link} />
        </div>
      )}
      <form
        class="row"
        aria-label="Invite a member"
        onSubmit={submitInPlace(() =>
          act(async () => {
            created.value = (await api.post<InvitationCreated>("/api/invitations", { email: email.value.trim(), role: role.value })).data;
            email.value = "";
          }),
        )}
      >
        <label class="field inline">
          <span>E-mail</span>
          <input type="email" required disabled={!isAdmin} {...bindText(email)} />
        </label>
        <label class="field inline">
          <span>Role</span>
          <select disabled={!isAdmin} {...bindSelect(role)}>
            {roleOptions(roles.value.filter((r) => r.assignable))}
          </select>
        </label>
        <button type="submit" disabled={!isAdmin} title={adminReason ?? undefined}>
          Invite
        </button>
        {adminReason && <span class="muted small-text reason">{adminReason}</span>}
      </form>

      {isAdmin && (
        <>
          <h3>Pending invitations</h3>
          {invitations.value.length === 0 && <p class="empty">No pending invitations.</p>}
          <ul class="list">
            {invitations.value.map((i) => (
              <li key={i.id} class="row" data-invitation={i.email}>
                <span>
                  {i.email} — {i.role}, until {when(i.expiresAt)}
                </span>
                <button type="button" class="small danger" onClick={() => act(() => api.del(`/api/invitations/${i.id}`))}>
                  Revoke
                </button>
              </li>
            ))}
          </ul>
        </>
      )}

      <h3>Roles</h3>
      <Table columns={["Role", "Scopes", "For"]}>
        {roles.value.map((r) => (
          <tr key={r.name} data-role={r.name}>
            <td>{r.name}</td>
            <td class="small-text">{r.scopes.join(", ")}</td>
            <td class="small-text">{r.description}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
