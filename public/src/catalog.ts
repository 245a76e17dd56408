/** Piece catalog reads, cached for the page's life: the list, piece detail, and projections by query. */
import { api } from "./api";
import type { PieceDetail, PieceListItem, Projection } from "./types";

let list: Promise<PieceListItem[]> | undefined;
const details = new Map<string, Promise<PieceDetail>>();
const projections = new Map<string, Promise<Projection>>();

export function listPieces(): Promise<PieceListItem[]> {
  list ??= (async () => {
    const all: PieceListItem[] = [];
    for (let page = 1; page < 50; page++) {
      const res = await api.get<PieceListItem[]>("/api/pieces", { page, limit: 100 });
      all.push(...res.data);
      if (all.length >= (res.total ?? 0) || res.data.length === 0) break;
    }
    return all;
  })();
  list.catch(() => (list = undefined));
  return list;
}

export function pieceDetail(id: string): Promise<PieceDetail> {
  let hit = details.get(id);
  if (!hit) {
    hit = api.get<PieceDetail>(`/api/pieces/${encodeURIComponent(id)}`).then((res) => res.data);
    hit.catch(() => details.delete(id));
    details.set(id, hit);
  }
  return hit;
}

/** Gate values are the step's scalar config values; keys that gate nothing are ignored by the server. */
export function gateQuery(config: Record<string, unknown> | undefined): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(config ?? {})) {
    if (key === "view" || key === "gateValues") continue;
    if ((typeof value === "string" && value !== "" && !value.includes("{{")) || typeof value === "number" || typeof value === "boolean")
      query[key] = String(value);
  }
  return query;
}

export function projection(kind: "actions" | "triggers", pieceId: string, id: string, config?: Record<string, unknown>): Promise<Projection> {
  const query = new URLSearchParams(Object.entries(gateQuery(config)).sort(([a], [b]) => a.localeCompare(b))).toString();
  const path = `/api/pieces/${encodeURIComponent(pieceId)}/${kind}/${encodeURIComponent(id)}${query ? `?${query}` : ""}`;
  let hit = projections.get(path);
  if (!hit) {
    hit = api.get<Projection>(path).then((res) => res.data);
    hit.catch(() => projections.delete(path));
    projections.set(path, hit);
  }
  return hit;
}

/** Forgets every cached read: the catalog changed (a piece package was installed, upgraded or removed). */
export function forgetCatalog(): void {
  list = undefined;
  details.clear();
  projections.clear();
}
