/** Pieces: the catalog, piece detail and summary, schema projections, dynamic options, derived trigger samples. */
import { Elysia, t, type TSchema } from "elysia";
import type { AppDeps } from "./deps";
import { dynamicOptions, findPiece, listPieces, pieceDetail, pieceSummary, ProjectionCache, triggerSample } from "../core/pieces/catalog";
import type { QueryValues } from "../core/pieces/projection";
import { AppError } from "../http/errors";
import { jsonText } from "../http/json-text";
import { Data, List, PageQuery, pageOf } from "../schema/common";
import { ActionId, DynamicOptionsFields, DynamicPropertyName, PieceId, PieceListItem, PieceSearch, TriggerId } from "../schema/piece";

const tags = ["Pieces"];
const permission = "piece:read" as const;

const PieceParams = t.Object({ id: PieceId });
const ActionParams = t.Object({ id: PieceId, actionId: ActionId });
const TriggerParams = t.Object({ id: PieceId, triggerId: TriggerId });
const OptionsParams = t.Object({ id: PieceId, actionId: ActionId, propertyName: DynamicPropertyName });

const TriggerOptionsParams = t.Object({
  id: PieceId,
  triggerId: TriggerId,
  propertyName: t.String({ description: "A trigger property whose values are dynamic (listed in dynamicFields)" }),
});

const ProjectedProperty = t.Record(t.String(), t.Unknown(), {
  description:
    "a projected property: type, description, default, enum, enumLabels, format, properties, items, propertyType, required, minLength, maxLength, min, max, pattern, refreshers, language, displayConditions",
});
const ObjectSchema = t.Object({ type: t.String(), properties: t.Record(t.String(), ProjectedProperty), required: t.Array(t.String()) });

const Projection = t.Object({
  pieceId: t.String(),
  pieceVersion: t.String(),
  id: t.String(),
  name: t.String(),
  description: t.String(),
  sideEffects: t.String({ description: "pure, read, write or external; always empty for triggers" }),
  inputSchema: ObjectSchema,
  outputSchema: ObjectSchema,
  sampleData: t.Unknown(),
  filteredBy: t.Record(t.String(), t.String()),
  ignored: t.Array(t.String()),
  unresolved: t.Array(t.String()),
  conditionalFields: t.Array(t.String()),
  dynamicFields: t.Array(t.String()),
});

const ProjectionQuery = t.Object(
  {
    view: t.Optional(t.String({ description: "Reserved; selects nothing" })),
    gateValues: t.Optional(t.String({ description: "Reserved; never sent literally" })),
  },
  { additionalProperties: true, description: "Any number of <property_name>=<text value> gate values" },
);

const OptionsBody = t.Object(DynamicOptionsFields, { additionalProperties: false });

const SampleBody = t.Object(
  {
    config: t.Optional(t.Record(t.String(), t.Unknown(), { description: "The trigger's config" })),
  },
  { additionalProperties: false },
);

/** Raw query pairs, keeping repeated keys (a contains_any gate may be sent as a=x&a=y or a=x,y). */
function rawQuery(url: string): QueryValues {
  const at = url.indexOf("?");
  const out: QueryValues = {};
  if (at < 0) return out;
  for (const [key, value] of new URLSearchParams(url.slice(at + 1))) {
    const existing = out[key];
    out[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}

const OptionsAnswer = Data(
  t.Object({
    options: t.Array(t.Object({ label: t.String(), value: t.Unknown() })),
    placeholder: t.Optional(t.String()),
    properties: t.Optional(
      t.Record(t.String(), ProjectedProperty, {
        description: "For a property of dependent fields (propertyType dynamic): the fields the given config calls for; its value is an object keyed by them",
      }),
    ),
  }),
);

/** The options of GET …/actions/{actionId} or …/triggers/{triggerId}: a step's schema projection; `params` name the step. */
const projectionRoute = <P extends TSchema>(params: P, summary: string) => ({
  permission,
  params,
  query: ProjectionQuery,
  response: { 200: Data(Projection) },
  detail: { tags, summary },
});

/** The options of POST …/options/{propertyName} of an action or a trigger; `params` name the step and the property. */
const optionsRoute = <P extends TSchema>(params: P, summary: string) => ({
  permission,
  params,
  body: t.Optional(OptionsBody),
  response: { 200: OptionsAnswer },
  detail: { tags, summary },
});

export const piecesApi = (deps: AppDeps) => {
  const { security, pieces } = deps;
  const projections = new ProjectionCache(pieces);
  /** POST …/options/{propertyName} of an action or a trigger: the piece's own options function, run for this workspace. */
  const options = async (
    workspaceId: string,
    pieceId: string,
    stepId: string,
    propertyName: string,
    body: { config?: object; connectionId?: string } | null | undefined,
    kind: "action" | "trigger",
  ) => ({
    data: await dynamicOptions(
      pieces,
      { fetch: deps.guardedFetch, resolveAuth: deps.resolveConnectionAuth },
      {
        workspaceId,
        pieceId,
        actionId: stepId,
        propertyName,
        config: body?.config as Record<string, unknown> | undefined,
        connectionId: body?.connectionId,
        kind,
      },
    ),
  });
  return new Elysia({ name: "api-pieces" })
    .use(security)
    .get(
      "/api/pieces",
      ({ query }) => {
        const { offset, limit } = pageOf(query);
        return listPieces(pieces, { q: query.q, offset, limit });
      },
      {
        permission,
        query: t.Object({ q: PieceSearch, ...PageQuery }, { additionalProperties: true }),
        response: List(PieceListItem),
        detail: { tags, summary: "List the pieces this server serves, with their versions" },
      },
    )
    .get(
      "/api/pieces/:id",
      ({ params, query }) => {
        const piece = findPiece(pieces, params.id);
        if (query.view === undefined || query.view === "") return { data: pieceDetail(piece) };
        if (query.view === "summary") return { data: pieceSummary(piece) };
        throw new AppError("VALIDATION_FAILED", `view "${query.view}" is unknown; use view=summary or omit it`);
      },
      {
        permission,
        params: PieceParams,
        query: t.Object(
          { view: t.Optional(t.String({ description: "summary: ids, names, auth kind and discriminators only" })) },
          { additionalProperties: true },
        ),
        detail: { tags, summary: "Piece detail (auth incl. auth.oauth2, actions, triggers with their lowercase type); ?view=summary returns discriminators" },
      },
    )
    .get(
      "/api/pieces/:id/actions/:actionId",
      ({ params, request }) => jsonText(projections.actionJson(params.id, params.actionId, rawQuery(request.url))),
      projectionRoute(ActionParams, "Schema projection of an action, narrowed by <property>=<value> gate values"),
    )
    .get(
      "/api/pieces/:id/triggers/:triggerId",
      ({ params, request }) => jsonText(projections.triggerJson(params.id, params.triggerId, rawQuery(request.url))),
      projectionRoute(TriggerParams, "Schema projection of a trigger, narrowed by <property>=<value> gate values"),
    )
    .post(
      "/api/pieces/:id/actions/:actionId/options/:propertyName",
      ({ params, body, auth }) => options(auth!.workspaceId, params.id, params.actionId, params.propertyName, body, "action"),
      optionsRoute(OptionsParams, "Dynamic option values of a property, given the step's current config and connection"),
    )
    .post(
      "/api/pieces/:id/triggers/:triggerId/options/:propertyName",
      ({ params, body, auth }) => options(auth!.workspaceId, params.id, params.triggerId, params.propertyName, body, "trigger"),
      optionsRoute(TriggerOptionsParams, "Dynamic option values of a trigger property, given the trigger's current config and connection"),
    )
    .post(
      "/api/pieces/:id/triggers/:triggerId/sample",
      async ({ params, body }) => ({
        data: await triggerSample(pieces, { pieceId: params.id, triggerId: params.triggerId, config: body?.config }),
      }),
      {
        permission,
        params: TriggerParams,
        body: t.Optional(SampleBody),
        response: { 200: Data(t.Object({ sampleData: t.Unknown(), derived: t.Boolean({ description: "true when computed from the supplied config" }) })) },
        detail: { tags, summary: "Sample output of a trigger derived from the supplied config (Form, Schedule, Callable); else the declared example" },
      },
    );
};
