/** Piece packages: install Activepieces community pieces from the npm registry, list, upgrade and remove them (workspace:admin). */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { Data, List } from "../schema/common";
import type { AppDeps } from "./deps";

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

const AddBody = t.Object(
  {
    package: t.String({
      minLength: 1,
      maxLength: 214,
      description: "an npm package name with an optional version or tag: @activepieces/piece-mysql, @activepieces/piece-mysql@0.2.7",
    }),
  },
  { additionalProperties: false },
);
const PackageParams = t.Object({ pieceId: t.String({ pattern: "^[a-z][a-z0-9_-]{0,63}$", description: "e.g. ap-mysql" }) });

export const piecePackagesApi = ({ security, piecePackages }: AppDeps) =>
  new Elysia({ name: "api-piece-packages" })
    .use(security)
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
      async ({ body, set }) => {
        set.status = 201;
        return { data: await piecePackages.add(body.package) };
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
      async ({ params, set }) => {
        set.status = 201;
        return { data: await piecePackages.upgrade(params.pieceId) };
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
      async ({ params, query }) => {
        const data = await piecePackages.remove(params.pieceId, query.version);
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
