/**
 * Connections from the UI: create one with the credential fields the piece's auth declares, and run the
 * OAuth2 flow in a popup (docs/connections.md "The OAuth2 flow"): start → open authorizeUrl → the callback
 * page posts a message to this window; polling GET /api/connections/{id} covers a popup that cannot post.
 */
import { api } from "./api";
import type { AuthorizeStart, Connection } from "./types";

/** Opens the popup synchronously (inside the click) so popup blockers let it through. */
export async function authorizeConnection(id: string, timeoutMs = 10 * 60_000): Promise<Connection> {
  const popup = window.open("about:blank", `weft-oauth2-${id}`, "width=620,height=720");
  try {
    const start = await api.post<AuthorizeStart>(`/api/connections/${id}/oauth2/start`);
    if (popup) popup.location.href = start.data.authorizeUrl;
    else window.open(start.data.authorizeUrl, "_blank");
  } catch (error) {
    popup?.close();
    throw error;
  }
  return await new Promise<Connection>((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    let timer: ReturnType<typeof setTimeout>;
    const done = () => {
      window.removeEventListener("message", onMessage);
      clearTimeout(timer);
    };
    const check = async () => {
      try {
        const res = await api.get<Connection>(`/api/connections/${id}`);
        if (res.data.status !== "pending") {
          done();
          return resolve(res.data);
        }
      } catch (error) {
        done();
        return reject(error);
      }
      if (Date.now() > deadline) {
        done();
        return reject(new Error("the authorization was not completed within 10 minutes; start it again"));
      }
      timer = setTimeout(check, 1500);
    };
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== location.origin || event.data?.type !== "weft:oauth2" || event.data.connectionId !== id) return;
      clearTimeout(timer);
      void check();
    };
    window.addEventListener("message", onMessage);
    timer = setTimeout(check, 1500);
  });
}

export async function listConnections(pieceId?: string): Promise<Connection[]> {
  const res = await api.get<Connection[]>("/api/connections", { pieceId, limit: 100 });
  return res.data;
}
