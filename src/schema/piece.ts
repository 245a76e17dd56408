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
