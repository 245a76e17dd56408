/**
 * A loopback stand-in for a Gotify server (Gotify is not packaged in Debian): `POST /message` as Gotify's
 * API documentation (gotify.net "API Docs", its swagger spec) describes it. The application token comes in
 * the `X-Gotify-Key` header (or the `token` query parameter); the body is JSON `{message, title?,
 * priority?, extras?}`, `message` required. Answers: 200 with the created message (`id`, `appid`,
 * `message`, `title`, `priority`, `extras`, `date`); 400, 401 and 403 with Gotify's error body
 * `{error, errorCode, errorDescription}`. A client token (one made for reading, not an application's) is
 * refused with 403, as Gotify does.
 *   const gotify = startGotify(); ... gotify.messages ... gotify.stop();
 */

interface GotifyMessage {
  id: number;
  appid: number;
  message: string;
  title: string;
  priority: number;
  extras?: Record<string, unknown>;
  date: string;
}

const failure = (status: number, error: string, errorDescription: string) => Response.json({ error, errorCode: status, errorDescription }, { status });

export function startGotify(options: { appTokens?: Record<string, number>; clientTokens?: string[] } = {}) {
  const appTokens = options.appTokens ?? { AbCdEf12345: 1 };
  const clientTokens = new Set(options.clientTokens ?? ["CxYz98765"]);
  const messages: GotifyMessage[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname !== "/message" || req.method !== "POST") return failure(404, "Not Found", "page not found");
      const token = req.headers.get("x-gotify-key") ?? url.searchParams.get("token") ?? "";
      if (clientTokens.has(token)) return failure(403, "Forbidden", "you are not allowed to access this api");
      const appid = appTokens[token];
      if (appid === undefined) return failure(401, "Unauthorized", "you need to provide a valid access token or user credentials to access this api");
      let body: Record<string, unknown>;
      try {
        body = (await req.json()) as Record<string, unknown>;
      } catch {
        return failure(400, "Bad Request", "invalid character in the JSON body");
      }
      if (typeof body.message !== "string" || body.message === "") return failure(400, "Bad Request", "Field 'message' is required");
      if (body.priority !== undefined && !Number.isInteger(body.priority)) return failure(400, "Bad Request", "Field 'priority' must be an integer");
      if (body.extras !== undefined && (typeof body.extras !== "object" || body.extras === null || Array.isArray(body.extras)))
        return failure(400, "Bad Request", "Field 'extras' must be an object");
      const message: GotifyMessage = {
        id: messages.length + 1,
        appid,
        message: body.message,
        title: typeof body.title === "string" ? body.title : "",
        // Gotify uses the application's default priority (0 unless set) when none is sent.
        priority: (body.priority as number | undefined) ?? 0,
        ...(body.extras ? { extras: body.extras as Record<string, unknown> } : {}),
        date: new Date().toISOString(),
      };
      messages.push(message);
      return Response.json(message);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    appToken: Object.keys(appTokens)[0]!,
    clientToken: [...clientTokens][0]!,
    messages,
    stop: () => server.stop(true),
  };
}
