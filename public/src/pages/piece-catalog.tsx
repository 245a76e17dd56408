/**
 * The catalog of Activepieces pieces the npm registry serves (GET /api/pieces/catalog, docs/activepieces.md):
 * search, a category filter, one card per piece with its logo, description, version, counts, auth, and
 * whether it is installed or has an update; one click installs or updates through the install routes
 * (the parent shows the progress). Offline, the server answers from its bundled index and this says how old it is.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote } from "../components/error-note";
import { PieceLogo } from "../components/piece-logo";
import type { CatalogEntry, CatalogPage } from "../types";
import { bindSelect, bindText } from "../bind";

const PAGE_SIZE = 12;
const AUTH_LABELS: Record<string, string> = {
  SECRET_TEXT: "API key",
  BASIC_AUTH: "username and password",
  CUSTOM_AUTH: "custom fields",
  OAUTH2: "OAuth2",
  none: "none",
};

/** "COMMUNICATION" → "Communication", "DEVELOPER_TOOLS" → "Developer tools". */
export function categoryLabel(category: string): string {
  const text = category.toLowerCase().replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** How long ago an instant was, in days: "today", "1 day ago", "12 days ago". */
export function age(iso: string, now = Date.now()): string {
  const days = Math.floor((now - Date.parse(iso)) / 86_400_000);
  if (!Number.isFinite(days)) return "at an unknown time";
  return days <= 0 ? "today" : days === 1 ? "1 day ago" : `${days} days ago`;
}

function count(n: number | null, one: string): string {
  if (n === null) return `? ${one}s`;
  return `${n} ${one}${n === 1 ? "" : "s"}`;
}

export function PieceCatalog({
  initialQuery,
  busy,
  reloadKey,
  onInstall,
}: {
  initialQuery: string;
  busy: string | null;
  /** Changes after an install, an upgrade or a removal: the page is asked again. */
  reloadKey: number;
  onInstall(entry: CatalogEntry): void;
}) {
  const text = useSignal(initialQuery);
  const query = useSignal(initialQuery);
  const category = useSignal("");
  const page = useSignal(1);
  const firstPage = () => {
    page.value = 1;
  };
  const result = useSignal<CatalogPage | null>(null);
  const loading = useSignal(false);
  const error = useSignal<unknown>(null);

  useEffect(() => {
    text.value = initialQuery;
    query.value = initialQuery;
    page.value = 1;
  }, [initialQuery]);

  // Typing settles for a moment before the server is asked: one request per search, not per key.
  useEffect(() => {
    const timer = setTimeout(() => {
      if (query.value !== text.value.trim()) {
        query.value = text.value.trim();
        page.value = 1;
      }
    }, 300);
    return () => clearTimeout(timer);
  }, [text.value]);

  useEffect(() => {
    const abort = new AbortController();
    loading.value = true;
    error.value = null;
    api
      .get<CatalogEntry[]>(
        "/api/pieces/catalog",
        { q: query.value || undefined, category: category.value || undefined, page: page.value, limit: PAGE_SIZE },
        abort.signal,
      )
      .then((res) => {
        result.value = res as CatalogPage;
      })
      .catch((e) => {
        if (!abort.signal.aborted) error.value = e;
      })
      .finally(() => {
        if (!abort.signal.aborted) loading.value = false;
      });
    return () => abort.abort();
  }, [query.value, category.value, page.value, reloadKey]);

  const res = result.value;
  const total = res?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return (
    <section aria-labelledby="catalog-title" class="catalog">
      <div class="catalog-head">
        <h3 id="catalog-title">Catalog</h3>
        <label class="field inline catalog-search">
          <span>Search the catalog</span>
          <input type="search" placeholder="e.g. slack, database, email" {...bindText(text)} />
        </label>
        <label class="field inline">
          <span>Category</span>
          <select {...bindSelect(category, firstPage)}>
            <option value="">All</option>
            {(res?.categories ?? []).map((c) => (
              <option key={c} value={c}>
                {categoryLabel(c)}
              </option>
            ))}
          </select>
        </label>
        <span class="muted small-text" aria-live="polite">
          {loading.value ? "Searching…" : `${total} ${total === 1 ? "piece" : "pieces"}`}
        </span>
      </div>
      {res?.source === "index" && (
        <p class="note catalog-offline" role="status">
          {res.offlineReason
            ? `Offline: ${res.offlineReason} — showing the bundled index`
            : "Categories are known to the bundled index and the installed pieces only — showing the bundled index"}
          {res.indexGeneratedAt ? `, made ${age(res.indexGeneratedAt)} (${res.indexGeneratedAt.slice(0, 10)}).` : " (none is bundled)."}
        </p>
      )}
      <ErrorNote error={error.value} />
      {res && res.data.length === 0 && !loading.value && <p class="empty">No piece matches{query.value ? ` “${query.value}”` : ""}.</p>}
      <ul class="catalog-grid" aria-label="Catalog pieces">
        {(res?.data ?? []).map((p) => {
          const installed = p.installedVersions[0];
          return (
            <li class="catalog-card" key={p.name} data-piece={p.name} aria-label={p.displayName}>
              <div class="catalog-card-head">
                <PieceLogo src={p.logoUrl} name={p.displayName} />
                <div class="catalog-card-title">
                  <strong>{p.displayName}</strong>
                  <span class="muted small-text" title={`${p.name} ${p.version}`}>
                    <span class="catalog-version">{p.version}</span> · {p.name}
                  </span>
                </div>
              </div>
              {p.description && <p class="catalog-desc">{p.description}</p>}
              <p class="small-text muted catalog-facts">
                {p.actions === null && p.triggers === null && p.authKind === null
                  ? "Counts and auth: known once installed"
                  : `${count(p.actions, "action")} · ${count(p.triggers, "trigger")} · auth: ${p.authKind === null ? "known once installed" : (AUTH_LABELS[p.authKind] ?? p.authKind)}`}
              </p>
              {p.categories.length > 0 && (
                <p class="catalog-tags">
                  {p.categories.map((c) => (
                    <span class="tag" key={c}>
                      {categoryLabel(c)}
                    </span>
                  ))}
                </p>
              )}
              <div class="catalog-card-foot">
                {installed ? <span class="badge status-completed">Installed {installed}</span> : <span class="muted small-text">Not installed</span>}
                {p.updateAvailable && <span class="badge status-paused">Update available: {p.version}</span>}
                <span class="spacer" />
                {(!installed || p.updateAvailable) && (
                  <button
                    type="button"
                    class="small"
                    disabled={busy !== null}
                    aria-label={`${installed ? "Update" : "Install"} ${p.displayName}`}
                    onClick={() => onInstall(p)}
                  >
                    {installed ? "Update" : "Install"}
                  </button>
                )}
              </div>
            </li>
          );
        })}
      </ul>
      {pages > 1 && (
        <nav class="pager" aria-label="Catalog pages">
          <button
            type="button"
            class="small"
            disabled={page.value <= 1 || loading.value}
            onClick={() => {
              page.value -= 1;
            }}
          >
            Previous
          </button>
          <span class="small-text">
            Page {page.value} of {pages}
          </span>
          <button
            type="button"
            class="small"
            disabled={page.value >= pages || loading.value}
            onClick={() => {
              page.value += 1;
            }}
          >
            Next
          </button>
        </nav>
      )}
    </section>
  );
}
