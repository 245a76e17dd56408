/**
 * The roles of a workspace member, each a set of the existing scopes (./scopes.ts), written once here as data
 * (docs/teams.md shows this table; a test checks the two agree). A member's session acts with its role's
 * scopes; a token a member minted acts with the scopes it was given that the role still has.
 */
import { SCOPES, type Scope } from "./scopes";

const READS = ["workflow:read", "run:read", "piece:read", "connection:read", "template:read"] as const satisfies readonly Scope[];

export const ROLES = {
  /** Everything; the only one who can transfer ownership (and whose membership no one else can change). */
  owner: { scopes: [...SCOPES], description: "everything; transfers ownership; one per workspace" },
  admin: { scopes: [...SCOPES], description: "everything but ownership: members, invitations, tokens, settings" },
  editor: {
    scopes: [...READS, "workflow:write", "workflow:run", "run:write", "connection:write", "template:write"],
    description: "builds workflows, connections and templates, runs them; cannot publish or administer",
  },
  operator: { scopes: [...READS, "workflow:run", "run:write"], description: "runs, retries, cancels and reads; cannot edit or publish" },
  viewer: { scopes: [...READS], description: "reads" },
} as const satisfies Record<string, { scopes: readonly Scope[]; description: string }>;

export type RoleName = keyof typeof ROLES;
export const ROLE_NAMES = Object.keys(ROLES) as RoleName[];
/** The roles an invitation or a role change may give: ownership only moves by transfer. */
export const ASSIGNABLE_ROLES = ROLE_NAMES.filter((role) => role !== "owner");

const scopeSets = new Map<RoleName, ReadonlySet<Scope>>(ROLE_NAMES.map((role) => [role, new Set<Scope>(ROLES[role].scopes)]));
export const isRole = (value: string): value is RoleName => scopeSets.has(value as RoleName);
export const roleScopes = (role: RoleName): ReadonlySet<Scope> => scopeSets.get(role)!;
/** The roles whose scopes include `scope`, in the order above. */
export const rolesWith = (scope: Scope): RoleName[] => ROLE_NAMES.filter((role) => scopeSets.get(role)!.has(scope));
