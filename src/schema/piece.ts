/**
 * Request fields of the pieces catalog, declared once for the HTTP routes (src/api/pieces.ts) and the MCP
 * tools that mirror them (src/mcp/tools/pieces.ts), so both validate and document the same inputs.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { t } from "elysia";

export const PieceId = t.String({ description: "Piece id, e.g. http" });
export const ActionId = t.String({ description: "Action id" });
export const TriggerId = t.String({ description: "Trigger id" });
export const DynamicPropertyName = t.String({ description: "A property whose values are dynamic (listed in dynamicFields)" });
export const PieceSearch = t.Optional(t.String({ description: "Text to find in ids, names and descriptions of pieces, actions and triggers" }));

/** What resolving a dynamic property's options takes besides its address. */
export const DynamicOptionsFields = {
  config: t.Optional(t.Record(t.String(), t.Unknown(), { description: "The step's current config" })),
  connectionId: t.Optional(t.String({ format: "uuid", description: "The step's connection, for properties refreshed by auth" })),
};

/** GET /api/pieces/catalog's filters (and the search_catalog tool's): words and an Activepieces category. */
export const CatalogFilters = {
  q: t.Optional(t.String({ maxLength: 100, description: "words to find in names and descriptions (and, from the index, categories)" })),
  category: t.Optional(t.String({ pattern: "^[A-Z_]{1,40}$", description: "one of the page's categories, e.g. COMMUNICATION" })),
};

/** What POST /api/pieces/packages installs (and the install_piece tool). */
export const PackageSpec = t.String({
  minLength: 1,
  maxLength: 214,
  description: "an npm package name with an optional version or tag: @activepieces/piece-mysql, @activepieces/piece-mysql@0.2.7",
});

/** One piece of GET /api/pieces. */
export const PieceListItem = t.Object({
  id: t.String(),
  name: t.String(),
  version: t.String(),
  description: t.String(),
  icon: t.Union([t.String(), t.Null()], {
    description: "an emoji, a data:image URL, or an https image URL (an Activepieces piece's logo), shown beside the piece; null when it has none",
  }),
  auth: t.Union([t.String(), t.Null()], { description: "oauth2, api_key, basic, custom or null" }),
  actions: t.Array(t.String()),
  triggers: t.Array(t.String()),
});

/** An installed piece package (GET /api/pieces/packages and the answers of install and upgrade). */
export const PackageView = t.Object({
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

export const CatalogEntry = t.Object({
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

/** GET /api/pieces/catalog: a page of the Activepieces catalog. */
export const CatalogPage = t.Object({
  data: t.Array(CatalogEntry),
  total: Type.Integer(),
  source: t.Union([t.Literal("registry"), t.Literal("index")], {
    description: "registry: the registry's search answered; index: the bundled index did (the registry could not be asked, or a category was chosen)",
  }),
  indexGeneratedAt: Nullable(t.String(), "when the bundled index was made; null when none is bundled"),
  offlineReason: Nullable(t.String(), "why the registry was not used, when it could not be asked"),
  categories: t.Array(t.String(), { description: "every category known to the index and the installed pieces" }),
});
