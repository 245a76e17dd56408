/**
 * Piece packages: browse the catalog of Activepieces pieces the npm registry serves (piece:read); install
 * them from it, list, upgrade and remove them (workspace:admin). See docs/activepieces.md.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { Data, List, PageQuery, pageOf } from "../schema/common";
import { CatalogFilters, PackageSpec } from "../schema/piece";
import type { AppDeps } from "./deps";
import { auditOf } from "./audit";

const tags = ["Pieces"];
const permission = "workspace:admin" as const;

const PackageView = t.Object({
  pieceId: t.String({ description: "the id the piece has in Weft, e.g. ap-mysql" }),
  name: t.String({ description: "the npm package, e.g. @activepieces/piece-mysql" }),
  version: t.String(),
  displayName: t.String(),
  integrity: t.String({ description: "the tarball's integrity (sha512), checked against the registry's dist.integrity" }),
  source: t.Union([t.Literal("registry"), t.Literal("tarball")]),
  installedAt: t.String(),
  actions: Type.Integer(),
  triggers: Type.Integer(),
  authKind: t.Union([t.String(), t.Null()], { description: "the piece's auth: SECRET_TEXT, BASIC_AUTH, CUSTOM_AUTH, OAUTH2 or null" }),
  unsupported: t.Array(t.String(), { description: "property types of its actions that Weft does not map (such a property can only be left empty)" }),
});

const Nullable = <T extends TSchema>(schema: T, description: string) => t.Union([schema, t.Null()], { description });

const CatalogEntry = t.Object({
  name: t.String({ description: "the npm package, e.g. @activepieces/piece-slack" }),
  pieceId: t.String({ description: "the id it has (or would have) in Weft, e.g. ap-slack" }),
  displayName: t.String(),
  description: t.String(),
  version: t.String({ description: "the newest version the registry (or, offline, the bundled index) gives" }),
  logoUrl: Nullable(t.String(), "the piece's logo (Activepieces' CDN), null when none is known"),
  categories: t.Array(t.String(), { description: "Activepieces' categories, e.g. COMMUNICATION; empty when not known" }),
  actions: Nullable(Type.Integer(), "how many actions; null when not known until it is installed"),
  triggers: Nullable(Type.Integer(), "how many triggers; null when not known until it is installed"),
  authKind: Nullable(t.String(), "SECRET_TEXT, BASIC_AUTH, CUSTOM_AUTH, OAUTH2 or none; null when not known until it is installed"),
  installedVersions: t.Array(t.String(), { description: "the installed versions, newest first; empty when not installed" }),
  updateAvailable: t.Boolean({ description: "a newer version than the newest installed one exists" }),
});

const CatalogPage = t.Object({
  data: t.Array(CatalogEntry),
  total: Type.Integer(),
  source: t.Union([t.Literal("registry"), t.Literal("index")], {
    description: "registry: the registry's search answered; index: the bundled index did (the registry could not be asked, or a category was chosen)",
  }),
  indexGeneratedAt: Nullable(t.String(), "when the bundled index was made; null when none is bundled"),
  offlineReason: Nullable(t.String(), "why the registry was not used, when it could not be asked"),
  categories: t.Array(t.String(), { description: "every category known to the index and the installed pieces" }),
});

const CatalogQuery = t.Object({ ...CatalogFilters, ...PageQuery });

const AddBody = t.Object({ package: PackageSpec }, { additionalProperties: false });
const PackageParams = t.Object({ pieceId: t.String({ pattern: "^[a-z][a-z0-9_-]{0,63}$", description: "e.g. ap-mysql" }) });

export const piecePackagesApi = ({ security, piecePackages, audit }: AppDeps) =>
  new Elysia({ name: "api-piece-packages" })
    .use(security)
    .get(
      "/api/pieces/catalog",
      ({ query }) => {
        const { offset, limit } = pageOf(query);
        return piecePackages.catalog({ q: query.q, category: query.category, offset, limit });
      },
      {
        permission: "piece:read",
        query: CatalogQuery,
        response: CatalogPage,
        detail: {
          tags,
          summary:
            "Browse the Activepieces pieces the configured npm registry serves (its search API, cached), installed or not, with updates flagged; when the registry cannot be reached the bundled index answers and says how old it is. Install one with POST /api/pieces/packages",
        },
      },
    )
    .get(
      "/api/pieces/packages",
      () => {
        const data = piecePackages.list();
        return { data, total: data.length };
      },
      {
        permission,
        response: List(PackageView),
        detail: { tags, summary: "List installed piece packages, every version" },
      },
    )
    .post(
      "/api/pieces/packages",
      async (ctx) => {
        const data = await piecePackages.add(ctx.body.package);
        await auditOf(audit, ctx, "piece.installed", { type: "piece", id: data.pieceId, name: data.name }, { version: data.version, source: data.source });
        ctx.set.status = 201;
        return { data };
      },
      {
        permission,
        body: AddBody,
        response: { 201: Data(PackageView) },
        detail: {
          tags,
          summary:
            "Install an Activepieces package from the npm registry (no restart): its pieces join GET /api/pieces as ap-<name>. Installing a version already held answers it as it is; a package that is not a piece, or whose tarball does not match the registry's integrity, answers 422 and nothing is installed",
        },
      },
    )
    .post(
      "/api/pieces/packages/:pieceId/upgrade",
      async (ctx) => {
        const data = await piecePackages.upgrade(ctx.params.pieceId);
        await auditOf(audit, ctx, "piece.upgraded", { type: "piece", id: data.pieceId, name: data.name }, { version: data.version });
        ctx.set.status = 201;
        return { data };
      },
      {
        permission,
        params: PackageParams,
        response: { 201: Data(PackageView) },
        detail: { tags, summary: "Install the newest version of an installed package beside the others (steps pinned to older versions keep them)" },
      },
    )
    .delete(
      "/api/pieces/packages/:pieceId",
      async (ctx) => {
        const data = await piecePackages.remove(ctx.params.pieceId, ctx.query.version);
        await auditOf(
          audit,
          ctx,
          "piece.removed",
          { type: "piece", id: ctx.params.pieceId, name: data[0]?.name ?? null },
          {
            versions: data.map((p) => p.version),
          },
        );
        return { data, total: data.length };
      },
      {
        permission,
        params: PackageParams,
        query: t.Object({ version: t.Optional(t.String({ maxLength: 50, description: "one version; without it every version is removed" })) }),
        response: List(PackageView),
        detail: { tags, summary: "Remove an installed package version (or all); refused with 409 naming the published workflows that run it" },
      },
    );
