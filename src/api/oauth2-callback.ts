/**
 * GET /api/oauth2/callback: where providers send the person's browser after authorization
 * (docs/connections.md "The OAuth2 flow"). A browser endpoint: it answers an HTML page, never the JSON
 * envelope, whatever happens.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { callbackPageHeaders, renderCallbackPage } from "../core/connections/callback-page";
import { CallbackQuery } from "../schema/connection";

const first = (value: unknown): string | undefined => (Array.isArray(value) ? first(value[0]) : typeof value === "string" ? value : undefined);

export const oauth2CallbackApi = ({ security, connections, config }: AppDeps) =>
  new Elysia({ name: "api-oauth2-callback" }).use(security).get(
    "/api/oauth2/callback",
    async ({ query }) => {
      const outcome = await connections.completeOAuth2({
        code: first(query.code),
        state: first(query.state),
        error: first(query.error),
        error_description: first(query.error_description),
      });
      return new Response(renderCallbackPage(outcome, config.publicUrl), { status: outcome.status, headers: callbackPageHeaders() });
    },
    {
      permission: "public",
      query: CallbackQuery,
      detail: {
        tags: ["Connections"],
        summary: "OAuth2 redirect target: completes a connection (browser endpoint, HTML answer)",
        description:
          'The provider redirects the person\'s browser here with code and state. The state must be the signed, unexpired, unused one minted by POST /api/connections/{id}/oauth2/start; otherwise an error page is shown and nothing is stored. On success the code is exchanged (with the PKCE verifier), tokens are stored encrypted and the connection becomes active. The page posts {type: "weft:oauth2", connectionId, status, message} to window.opener.',
        responses: {
          200: { description: "Connected: an HTML page saying the window may be closed", content: { "text/html": { schema: { type: "string" } } } },
          400: {
            description: "Refused (tampered, expired, replayed or unknown state; provider declined): an HTML error page; nothing stored",
            content: { "text/html": { schema: { type: "string" } } },
          },
          502: { description: "The provider's token endpoint refused the code: an HTML error page", content: { "text/html": { schema: { type: "string" } } } },
        },
      },
    },
  );
