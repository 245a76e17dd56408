/**
 * Piece packages: browse the catalog of Activepieces pieces the npm registry serves (piece:read); install
 * them from it, list, upgrade and remove them (workspace:admin). See docs/activepieces.md.
 */
import { Elysia, t } from "elysia";
import { PageQuery, pageOf, wholeList } from "../schema/common";
import { CatalogFilters, CatalogPage, PackageSpec, PackageView } from "../schema/piece";
import type { AppDeps } from "./deps";
import { audited, auditOf } from "./audit";
import { routeOptions } from "./route-options";

const tags = ["Pieces"];
const route = routeOptions(tags);
const permission = "workspace:admin" as const;
/** A package's piece as the audit log names it. */
const target = (p: { pieceId: string; name: string }) => ({ type: "piece", id: p.pieceId, name: p.name });

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
    .get("/api/pieces/packages", () => wholeList(piecePackages.list()), {
      permission: permission,
      ...route.list(PackageView, "List installed piece packages, every version"),
    })
    .post(
      "/api/pieces/packages",
      async (ctx) => {
        const data = await piecePackages.add(ctx.body.package);
        ctx.set.status = 201;
        return audited(audit, ctx, data, "piece.installed", target(data), { version: data.version, source: data.source });
      },
      {
        permission: permission,
        ...route.creates(
          PackageView,
          "Install an Activepieces package from the npm registry (no restart): its pieces join GET /api/pieces as ap-<name>. Installing a version already held answers it as it is; a package that is not a piece, or whose tarball does not match the registry's integrity, answers 422 and nothing is installed",
        ),
        body: AddBody,
      },
    )
    .post(
      "/api/pieces/packages/:pieceId/upgrade",
      async (ctx) => {
        const data = await piecePackages.upgrade(ctx.params.pieceId);
        ctx.set.status = 201;
        return audited(audit, ctx, data, "piece.upgraded", target(data), { version: data.version });
      },
      {
        permission: permission,
        ...route.creates(PackageView, "Install the newest version of an installed package beside the others (steps pinned to older versions keep them)"),
        params: PackageParams,
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
          { versions: data.map((p) => p.version) },
        );
        return wholeList(data);
      },
      {
        permission: permission,
        ...route.list(PackageView, "Remove an installed package version (or all); refused with 409 naming the published workflows that run it"),
        params: PackageParams,
        query: t.Object({ version: t.Optional(t.String({ maxLength: 50, description: "one version; without it every version is removed" })) }),
      },
    );
