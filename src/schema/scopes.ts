/**
 * The complete scope list (docs/api.md "Everything else", **Scopes**). Every route declares one of these, or a
 * pseudo-scope.
 */
export const SCOPES = [
  "workflow:read",
  "workflow:write",
  "workflow:publish",
  "workflow:run",
  "run:read",
  "run:write",
  "piece:read",
  "connection:read",
  "connection:write",
  "template:read",
  "template:write",
  "workspace:admin",
  "metrics:read",
] as const;

export type Scope = (typeof SCOPES)[number];
/** `public`: no credential (webhooks, health, OAuth2 callback); `authenticated`: any valid credential. */
export type Permission = Scope | "public" | "authenticated";

/** The scopes of workflow edits: refused in a workspace managed by git (docs/workflows-as-code.md, "Environments"). */
export const EDIT_SCOPES: ReadonlySet<Permission> = new Set<Permission>(["workflow:write", "workflow:publish"]);

const known = new Set<string>(SCOPES);
export const isScope = (value: string): value is Scope => known.has(value);

/** Parses `a,b` or `all` into scopes; throws a message naming the unknown ones and the legal list. */
export function parseScopes(input: string | string[]): Scope[] {
  const list = (Array.isArray(input) ? input : input.split(/[\s,]+/)).map((s) => s.trim()).filter(Boolean);
  if (list.length === 1 && list[0] === "all") return [...SCOPES];
  const unknown = list.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw new Error(`unknown scope ${unknown.map((s) => `"${s}"`).join(", ")}; allowed: all, ${SCOPES.join(", ")}`);
  }
  if (list.length === 0) throw new Error(`no scope given; allowed: all, ${SCOPES.join(", ")}`);
  return [...new Set(list)] as Scope[];
}
