/**
 * Pieces tools: the catalog, a piece's summary (discriminators), schema projections narrowed by gate
 * values, and dynamic options — the same core functions as src/api/pieces.ts, scope `piece:read`; the
 * catalog of Activepieces pieces the npm registry serves (piece:read) and installing one (workspace:admin),
 * as src/api/piece-packages.ts.
 */
import { t } from "elysia";
import { dynamicOptions, findPiece, listPieces, pieceSummary, projectAction, projectTrigger } from "../../core/pieces/catalog";
import type { QueryValues } from "../../core/pieces/projection";
import { pageOf, PageQuery } from "../../schema/common";
import { ActionId, CatalogFilters, DynamicOptionsFields, DynamicPropertyName, PackageSpec, PieceId, PieceSearch, TriggerId } from "../../schema/piece";
import { defineTool } from "../tool";

const scope = "piece:read" as const;
const strict = { additionalProperties: false } as const;

const GateValue = t.Union([t.String(), t.Number(), t.Boolean(), t.Array(t.String())]);
const GateValues = t.Optional(
  t.Record(t.String(), GateValue, {
    description:
      "gate values: property name → the value you chose (text; numbers and booleans are coerced; a list for contains_any gates). " +
      "Fields that value rules out are dropped. Legal gates come from get_piece_summary (discriminators) or from `unresolved`.",
  }),
);

/** Gate values travel as query text on the HTTP route; the projection reads them the same way here. */
function asQuery(values: Record<string, unknown> | undefined): QueryValues {
  const query: QueryValues = {};
  for (const [key, value] of Object.entries(values ?? {})) query[key] = Array.isArray(value) ? value.map(String) : String(value);
  return query;
}

export const pieceTools = [
  defineTool<{ q?: string; page?: string; limit?: string }>({
    name: "list_pieces",
    description: "List the pieces this server runs (id, version, auth kind, action and trigger ids). Filter with q (text in ids, names, descriptions).",
    scope,
    readOnly: true,
    input: t.Object({ q: PieceSearch, ...PageQuery }, strict),
    run: ({ deps }, args) => {
      const { offset, limit } = pageOf(args);
      return listPieces(deps.pieces, { q: args.q, offset, limit });
    },
  }),
  defineTool<{ pieceId: string }>({
    name: "get_piece_summary",
    description:
      "A piece's actions and triggers (with each trigger's lowercase type) and their discriminators: the top-level properties that gate others, with their legal values. " +
      "Pass discriminator values to get_action_schema / get_trigger_schema to get only the fields that apply.",
    scope,
    readOnly: true,
    input: t.Object({ pieceId: PieceId }, strict),
    run: ({ deps }, args) => ({ data: pieceSummary(findPiece(deps.pieces, args.pieceId)) }),
  }),
  defineTool<{ pieceId: string; actionId: string; values?: Record<string, unknown> }>({
    name: "get_action_schema",
    description:
      "The input schema (config properties), output schema and sample of one action, narrowed by gate values. " +
      "The reply lists filteredBy (gates applied), ignored (keys that gate nothing), unresolved (gates still open), conditionalFields and dynamicFields (use resolve_dynamic_options).",
    scope,
    readOnly: true,
    input: t.Object({ pieceId: PieceId, actionId: ActionId, values: GateValues }, strict),
    run: ({ deps }, args) => ({ data: projectAction(deps.pieces, args.pieceId, args.actionId, asQuery(args.values)) }),
  }),
  defineTool<{ pieceId: string; triggerId: string; values?: Record<string, unknown> }>({
    name: "get_trigger_schema",
    description:
      "The config schema, output schema and declared sample of one trigger, narrowed by gate values (same rules as get_action_schema). The trigger's type is in get_piece_summary.",
    scope,
    readOnly: true,
    input: t.Object({ pieceId: PieceId, triggerId: TriggerId, values: GateValues }, strict),
    run: ({ deps }, args) => ({ data: projectTrigger(deps.pieces, args.pieceId, args.triggerId, asQuery(args.values)) }),
  }),
  defineTool<{ pieceId: string; actionId: string; propertyName: string; config?: Record<string, unknown>; connectionId?: string }>({
    name: "resolve_dynamic_options",
    description: "The legal values of a dynamic property (one listed in dynamicFields), given the step's current config and connection.",
    scope,
    readOnly: true,
    input: t.Object({ pieceId: PieceId, actionId: ActionId, propertyName: DynamicPropertyName, ...DynamicOptionsFields }, strict),
    run: async ({ deps, auth }, args) => {
      const data = await dynamicOptions(
        deps.pieces,
        { fetch: deps.guardedFetch, resolveAuth: deps.resolveConnectionAuth },
        {
          workspaceId: auth.workspaceId,
          pieceId: args.pieceId,
          actionId: args.actionId,
          propertyName: args.propertyName,
          config: args.config,
          connectionId: args.connectionId,
        },
      );
      return { data };
    },
  }),
  defineTool<{ q?: string; category?: string; page?: string; limit?: string }>({
    name: "search_catalog",
    description:
      "Search the catalog of Activepieces pieces the npm registry serves (not yet installed ones too): name, description, version, logo, categories, " +
      "counts of actions and triggers and auth kind (null until installed when unknown), installed versions, whether an update exists. Install one with install_piece.",
    scope,
    readOnly: true,
    input: t.Object({ ...CatalogFilters, ...PageQuery }, strict),
    run: async ({ deps }, args) => {
      const { offset, limit } = pageOf(args);
      return { ...(await deps.piecePackages.catalog({ q: args.q, category: args.category, offset, limit })) };
    },
  }),
  defineTool<{ package: string }>({
    name: "install_piece",
    description:
      "Install an Activepieces piece package from the npm registry (e.g. @activepieces/piece-slack, or with @version), no restart: its pieces join list_pieces as ap-<name>. " +
      "Installs for the whole server; the tarball's integrity is checked against the registry's.",
    scope: "workspace:admin",
    input: t.Object({ package: PackageSpec }, strict),
    run: async ({ deps }, args) => ({ data: await deps.piecePackages.add(args.package) }),
  }),
];
