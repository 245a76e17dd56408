/**
 * The shapes the UI reads from the API, taken from the server's own schemas (src/schema/, the same ones the
 * routes declare as their responses and the OpenAPI contract shows): a field renamed on the server fails
 * `npm run typecheck` here. Every import is type-only, so no server code reaches the browser bundle
 * (docs/architecture.md, "The UI").
 */
import type { Static } from "@sinclair/typebox";
import type { Identity } from "../../src/core/identity";
import type { pieceDetail } from "../../src/core/pieces/catalog";
import type { ProjectedProperty } from "../../src/core/pieces/projection";
import type * as audit from "../../src/schema/audit";
import type * as connection from "../../src/schema/connection";
import type * as fleet from "../../src/schema/fleet";
import type * as git from "../../src/schema/git";
import type * as folder from "../../src/schema/folder";
import type * as identity from "../../src/schema/identity";
import type * as network from "../../src/schema/network";
import type * as piece from "../../src/schema/piece";
import type * as run from "../../src/schema/run";
import type * as secondFactor from "../../src/schema/second-factor";
import type * as sso from "../../src/schema/sso";
import type * as template from "../../src/schema/template";
import type * as workflow from "../../src/schema/workflow";
import type * as record from "../../src/schema/workflow-record";

// ---- the definition tree (docs/api.md "1. Create a workflow") ----
export type Condition = workflow.ConditionT;
export type ActionNode = workflow.ActionNodeT;
export type TriggerNode = workflow.TriggerNodeT;
export type Branch = workflow.BranchT;
/** What every step, action or trigger, has. */
export type StepNode = ActionNode | TriggerNode;
export type Definition = workflow.FlowVersionT;

// ---- workflows ----
/** A workflow as listed (GET /api/workflows); its definition may be left out. */
export type WorkflowSummary = record.WorkflowT;
/** One workflow as GET /api/workflows/{id} and every write answer it: with its definition. */
export type Workflow = record.WorkflowT & { definition: Definition };
export type Diagnostic = record.DiagnosticT;
export type Diagnostics = record.DiagnosticsT;
export type VersionSummary = Static<typeof record.VersionSummary>;
export type Variable = Static<typeof record.Variable>;
export type FilesImportPlanEntry = Static<typeof record.WorkflowFilesImportResult>["plan"][number];
export type ForeignImportReport = Static<typeof record.ImportReportSchema>;
export type Folder = Static<typeof folder.Folder>;
export type TemplateSummary = Static<typeof template.TemplateSummary>;

// ---- runs ----
export type Run = run.RunT;
export type RunStep = run.StepT;
export type RunCounts = Static<typeof run.RunCounts>["data"];

// ---- pieces ----
export type PieceListItem = Static<typeof piece.PieceListItem>;
/** GET /api/pieces/{id}: the route declares no response schema, so the type is what the catalog builds. */
export type PieceDetail = ReturnType<typeof pieceDetail>;
/** The projection and its properties (docs/pieces.md "Schema projections") exactly as the server declares them. */
export type { Projection } from "../../src/core/pieces/projection";
/** The projection folds a property's displayName into its description; the editor still reads it when present. */
export type Property = ProjectedProperty & { displayName?: string };
export type PiecePackage = Static<typeof piece.PackageView>;
export type CatalogPage = Static<typeof piece.CatalogPage>;
export type CatalogEntry = Static<typeof piece.CatalogEntry>;

// ---- connections ----
export type Connection = Static<typeof connection.Connection>;
export type ConnectionTestResult = Static<typeof connection.ConnectionTestResult>;
export type AuthorizeStart = Static<typeof connection.AuthorizeStart>;

// ---- identity, members, settings ----
/** GET /api/auth/me: the route declares no response schema, so the type is what Identity.me answers. */
export type Me = Awaited<ReturnType<Identity["me"]>>;
export type Token = Static<typeof identity.Token>;
export type TokenCreated = Static<typeof identity.TokenCreated>;
export type Workspace = Static<typeof identity.Workspace>;
export type Role = Static<typeof identity.Role>;
export type Member = Static<typeof identity.Member>;
export type Invitation = Static<typeof identity.Invitation>;
export type InvitationCreated = Static<typeof identity.InvitationCreated>;
export type InvitationPreview = Static<typeof identity.InvitationPreview>;
export type Session = Static<typeof identity.Session>;
export type SecondFactorStatus = Static<typeof secondFactor.SecondFactorStatus>;
export type SecondFactorEnrolment = Static<typeof secondFactor.SecondFactorEnrolment>;
export type GitSettings = Static<typeof git.GitSettings>;
export type GitStatus = Static<typeof git.GitStatus>;
export type GitPullResult = Static<typeof git.GitPullResult>;
export type GitPushResult = Static<typeof git.GitPushResult>;
export type NetworkPolicy = Static<typeof network.NetworkPolicyAnswer>;
export type SsoProvider = Static<typeof sso.SsoProvider>;
export type SsoProviderPublic = Static<typeof sso.SsoProviderPublic>;
export type AuditEvent = Static<typeof audit.AuditEvent>;
export type FleetInstance = Static<typeof fleet.FleetInstance>;
