/**
 * Request fields of the pieces catalog, declared once for the HTTP routes (src/api/pieces.ts) and the MCP
 * tools that mirror them (src/mcp/tools/pieces.ts), so both validate and document the same inputs.
 */
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
