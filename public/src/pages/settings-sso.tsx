/**
 * Settings → Single sign-on (docs/teams.md): the org's OpenID Connect providers, each with the redirect URI to
 * register at the provider; the workspace owner adds, changes and removes them. The client secret is write-only:
 * the server stores it encrypted and never answers it.
 */
import { useSignal } from "@preact/signals";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { Options } from "../components/options";
import { me } from "../session";
import type { SsoProvider as Provider } from "../types";
import { useLoadedCall } from "../use-call";
import { Table } from "../components/table";

const ROLES = ["admin", "editor", "operator", "viewer"];
const EMPTY = {
  name: "",
  issuer: "",
  clientId: "",
  clientSecret: "",
  scopes: "openid email profile",
  roleClaim: "groups",
  mapping: "",
  defaultRole: "viewer",
  ssoOnly: false,
};

/** "weft-admins = admin" lines, one mapping each. */
const mappingText = (p: Provider) => p.roleMapping.map((m) => `${m.value} = ${m.role}${m.workspaceId ? ` @ ${m.workspaceId}` : ""}`).join("\n");
function parseMapping(text: string) {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const match = /^(.+?)\s*=\s*(\w+)(?:\s*@\s*(\S+))?$/.exec(line);
      if (!match) throw new Error(`"${line}" is not "claim value = role" (or "claim value = role @ workspace id")`);
      return { value: match[1]!, role: match[2]!, ...(match[3] ? { workspaceId: match[3] } : {}) };
    });
}

export function SsoTab() {
  const providers = useSignal<Provider[]>([]);
  const form = useSignal({ ...EMPTY });
  const editing = useSignal<string | null>(null);
  const owner = me.value?.role === "owner" || me.value?.role === null;
  const load = async () => {
    providers.value = (await api.get<Provider[]>("/api/sso/providers")).data;
  };
  const { busy, error, act } = useLoadedCall(load);
  const save = async (event: Event) => {
    event.preventDefault();
    const f = form.value;
    const ok = await act(async () => {
      const body = {
        name: f.name.trim(),
        issuer: f.issuer.trim(),
        clientId: f.clientId.trim(),
        ...(f.clientSecret ? { clientSecret: f.clientSecret } : {}),
        scopes: f.scopes,
        roleClaim: f.roleClaim.trim() || null,
        roleMapping: parseMapping(f.mapping),
        defaultRole: f.defaultRole,
        ssoOnly: f.ssoOnly,
      };
      if (editing.value) await api.put(`/api/sso/providers/${editing.value}`, body);
      else await api.post("/api/sso/providers", body);
    });
    if (ok) {
      form.value = { ...EMPTY };
      editing.value = null;
    }
  };
  const field = (key: keyof typeof EMPTY, label: string, extra: Record<string, unknown> = {}) => (
    <label class="field">
      <span>{label}</span>
      <input
        value={form.value[key] as string}
        disabled={!owner || busy.value}
        onInput={(e) => {
          form.value = { ...form.value, [key]: (e.target as HTMLInputElement).value };
        }}
        {...extra}
      />
    </label>
  );
  const origin = window.location.origin;
  return (
    <section aria-labelledby="sso-title">
      <h2 id="sso-title">Single sign-on</h2>
      <p class="help">
        People sign in through an OpenID Connect provider (Authelia, Authentik, Keycloak, Pocket ID, Kanidm…). Register Weft at the provider with the redirect
        URI shown for each provider below; docs/teams.md says how for each of them.
      </p>
      <ErrorNote error={error.value} />
      {providers.value.length === 0 ? (
        <p class="empty">No provider: people sign in with their e-mail and password.</p>
      ) : (
        <Table label="Single sign-on providers" columns={["Name", "Issuer", "Redirect URI", "Roles"]} actions="Actions">
          {providers.value.map((p) => (
            <tr key={p.id}>
              <td>
                {p.name}
                {p.ssoOnly && <span class="small-text muted"> (SSO only)</span>}
              </td>
              <td class="mono">{p.issuer}</td>
              <td class="mono small-text">{`${origin}${p.redirectPath}`}</td>
              <td class="small-text">
                {p.roleMapping.map((m) => `${m.value} → ${m.role}`).join(", ") || "—"}; otherwise {p.defaultRole}
              </td>
              <td>
                {owner && (
                  <>
                    <button
                      type="button"
                      class="small"
                      disabled={busy.value}
                      onClick={() => {
                        editing.value = p.id;
                        form.value = {
                          name: p.name,
                          issuer: p.issuer,
                          clientId: p.clientId,
                          clientSecret: "",
                          scopes: p.scopes,
                          roleClaim: p.roleClaim ?? "",
                          mapping: mappingText(p),
                          defaultRole: p.defaultRole,
                          ssoOnly: p.ssoOnly,
                        };
                      }}
                    >
                      Edit
                    </button>{" "}
                    <button
                      type="button"
                      class="small danger"
                      disabled={busy.value}
                      aria-label={`Remove ${p.name}`}
                      onClick={() => void act(() => api.del(`/api/sso/providers/${p.id}`))}
                    >
                      Remove
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {owner ? (
        <form class="card stack" onSubmit={save} aria-label={editing.value ? "Change provider" : "Add provider"}>
          <h3>{editing.value ? "Change provider" : "Add a provider"}</h3>
          {field("name", "Name (shown as “Sign in with …”)", { required: true })}
          {field("issuer", "Issuer URL", { required: true, placeholder: "https://auth.example.com", class: "mono" })}
          {field("clientId", "Client ID", { required: true })}
          {field("clientSecret", editing.value ? "Client secret (empty: keep the stored one)" : "Client secret", { type: "password", autocomplete: "off" })}
          {field("scopes", "Scopes")}
          {field("roleClaim", "Role claim (e.g. groups)")}
          <label class="field">
            <span>Role mapping: one “claim value = role” a line (roles: {ROLES.join(", ")})</span>
            <textarea
              rows={3}
              class="mono"
              value={form.value.mapping}
              disabled={busy.value}
              onInput={(e) => {
                form.value = { ...form.value, mapping: (e.target as HTMLTextAreaElement).value };
              }}
            />
          </label>
          <label class="field">
            <span>Default role of a first sign-in</span>
            <select
              value={form.value.defaultRole}
              disabled={busy.value}
              onChange={(e) => {
                form.value = { ...form.value, defaultRole: (e.target as HTMLSelectElement).value };
              }}
            >
              <Options choices={ROLES} />
            </select>
          </label>
          <label class="field inline">
            <input
              type="checkbox"
              checked={form.value.ssoOnly}
              disabled={busy.value}
              onChange={(e) => {
                form.value = { ...form.value, ssoOnly: (e.target as HTMLInputElement).checked };
              }}
            />
            <span>SSO only: refuse password logins (the owner keeps theirs: break-glass)</span>
          </label>
          <div class="row">
            <button type="submit" class="primary" disabled={busy.value}>
              {editing.value ? "Save provider" : "Add provider"}
            </button>
            {editing.value && (
              <button
                type="button"
                onClick={() => {
                  editing.value = null;
                  form.value = { ...EMPTY };
                }}
              >
                Cancel
              </button>
            )}
          </div>
        </form>
      ) : (
        <p class="help">Only the workspace owner adds and changes providers; your role is {me.value?.role ?? "none"}.</p>
      )}
    </section>
  );
}
