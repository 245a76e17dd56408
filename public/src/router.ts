/** Hash routing (#/workflows/<id>), so the server only serves `/` and the assets. */
import { signal } from "@preact/signals";

export type Route =
  | { page: "workflows" }
  | { page: "editor"; id: string }
  | { page: "runs" }
  | { page: "run"; id: string }
  | { page: "settings"; tab: string }
  | { page: "invite"; token: string }
  | { page: "profile" };

export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("?")[0].split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "workflows" && parts[1]) return { page: "editor", id: parts[1] };
  if (parts[0] === "runs" && parts[1]) return { page: "run", id: parts[1] };
  if (parts[0] === "runs") return { page: "runs" };
  if (parts[0] === "invite" && parts[1]) return { page: "invite", token: parts[1] };
  if (parts[0] === "profile") return { page: "profile" };
  if (parts[0] === "settings") return { page: "settings", tab: parts[1] ?? "tokens" };
  return { page: "workflows" };
}

export const route = signal<Route>(parseHash(typeof location === "undefined" ? "" : location.hash));

export function startRouter() {
  const update = () => {
    route.value = parseHash(location.hash);
  };
  window.addEventListener("hashchange", update);
  update();
  return () => window.removeEventListener("hashchange", update);
}

export const href = {
  workflows: () => "#/workflows",
  editor: (id: string) => `#/workflows/${encodeURIComponent(id)}`,
  runs: () => "#/runs",
  run: (id: string) => `#/runs/${encodeURIComponent(id)}`,
  settings: (tab = "tokens") => `#/settings/${tab}`,
  /** The signed-in person's password, second factor and sessions. */
  profile: () => "#/profile",
  /** The piece catalog (Settings → Integrations), searching for `q`. */
  catalog: (q = "") => `#/settings/integrations${q ? `?q=${encodeURIComponent(q)}` : ""}`,
};

export function navigate(to: string) {
  if (location.hash !== to) location.hash = to;
}
