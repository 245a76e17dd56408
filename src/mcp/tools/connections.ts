/** Connection tools: which credentials the workspace holds (secrets are never returned), as src/api/connections.ts. */
import { t } from "elysia";
import { ConnectionListQuery } from "../../schema/connection";
import { pageText, PageArgs, type PageArgsT } from "../page-args";
import { defineTool } from "../tool";

const { pieceId, status } = ConnectionListQuery.properties;

export const connectionTools = [
  defineTool<PageArgsT & { pieceId?: string; status?: string }>({
    name: "list_connections",
    description:
      "List the workspace's connections (id, piece, name, status) to put in a step's connectionId; filter by pieceId and status. Creating one needs a person (OAuth2 in a browser).",
    scope: "connection:read",
    readOnly: true,
    input: t.Object({ pieceId, status, ...PageArgs }, { additionalProperties: false }),
    run: ({ deps, auth }, args) => deps.connections.list(auth.workspaceId, { pieceId: args.pieceId, status: args.status, ...pageText(args) }),
  }),
];
