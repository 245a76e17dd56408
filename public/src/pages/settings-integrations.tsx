/**
 * Settings → Integrations: the catalog of Activepieces pieces the npm registry serves (./piece-catalog.tsx)
 * and the piece packages installed on this server (docs/activepieces.md). Install one from the catalog or
 * by npm name (with an optional version), see each installed version, upgrade, remove.
 * `#/settings/integrations?q=slack` opens the catalog searching for "slack" (the step picker's "More integrations").
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { forgetCatalog } from "../catalog";
import { ErrorNote } from "../components/error-note";
import { when } from "../format";
import { route } from "../router";
import type { CatalogEntry, FleetInstance, PiecePackage } from "../types";
import { PieceCatalog } from "./piece-catalog";
import { useLoadedCall } from "../use-call";
import { Table } from "../components/table";
import { ConfirmButton } from "../components/confirm-button";
import { bindText, submitInPlace } from "../bind";

/** One line per Weft instance on this database (the fleet registry): where it runs and whether it is alive. */
function FleetLine() {
  const instances = useSignal<FleetInstance[] | null>(null);
  useEffect(() => {
    api
      .get<FleetInstance[]>("/api/fleet")
      .then((res) => {
        instances.value = res.data;
      })
      .catch(() => {
        instances.value = null;
      });
  }, []);
  const list = instances.value;
  if (!list || list.length === 0) return null;
  return (
    <ul class="fleet" aria-label="Weft instances">
      {list.map((instance) => (
        <li key={instance.id}>
          {instance.self ? "This instance" : "Instance"} on <strong>{instance.hostname}</strong> (pid {instance.pid}, Weft {instance.version}):{" "}
          {instance.alive ? "alive" : "silent"}, last heartbeat {when(instance.lastHeartbeatAt)}, runs {instance.pieces.length} piece versions
        </li>
      ))}
    </ul>
  );
}

export function IntegrationsTab() {
  const packages = useSignal<PiecePackage[]>([]);
  const name = useSignal("");
  /** What is being installed, upgraded or removed now (shown as progress); null when idle. */
  const busy = useSignal<string | null>(null);
  const done = useSignal<string | null>(null);
  /** Bumped after every change, so the catalog asks its page again. */
  const changes = useSignal(0);
  // Read on each route change: the picker's "More integrations" lands here with ?q=.
  void route.value;
  const catalogQuery = new URLSearchParams(location.hash.split("?")[1] ?? "").get("q") ?? "";
  const load = async () => {
    packages.value = (await api.get<PiecePackage[]>("/api/pieces/packages")).data;
  };
  const { error, act } = useLoadedCall(load);
  /** Runs one change with its progress line, then reloads the list and the piece catalog. */
  const change = async (label: string, work: () => Promise<string>) => {
    done.value = null;
    busy.value = label;
    await act(async () => {
      done.value = await work();
      forgetCatalog();
      changes.value += 1;
    });
    busy.value = null;
  };
  return (
    <section aria-labelledby="integrations-title">
      <h2 id="integrations-title">Integrations</h2>
      <p class="help">
        Add Activepieces community pieces from the npm registry. They appear in the step picker as <code>ap-&lt;name&gt;</code> for every workspace, without a
        restart. Their code runs in a separate process that sees none of this server's secrets; installing one means trusting its code as you trust an npm
        package.
      </p>
      <FleetLine />
      {busy.value && (
        <p class="note" role="status" aria-live="polite">
          {busy.value}
        </p>
      )}
      {done.value && !busy.value && (
        <p class="note" role="status">
          {done.value}
        </p>
      )}
      <ErrorNote error={error.value} />
      <PieceCatalog
        initialQuery={catalogQuery}
        busy={busy.value}
        reloadKey={changes.value}
        onInstall={(entry: CatalogEntry) => {
          const updating = entry.installedVersions.length > 0;
          void change(`${updating ? "Updating" : "Installing"} ${entry.name}…`, async () => {
            const res = updating
              ? await api.post<PiecePackage>(`/api/pieces/packages/${encodeURIComponent(entry.pieceId)}/upgrade`, {})
              : await api.post<PiecePackage>("/api/pieces/packages", { package: entry.name });
            return `Installed ${res.data.name} ${res.data.version} as ${res.data.pieceId}.`;
          });
        }}
      />
      <h3>Installed packages</h3>
      <form
        class="row"
        onSubmit={submitInPlace(() => {
          const spec = name.value.trim();
          void change(`Installing ${spec}…`, async () => {
            const res = await api.post<PiecePackage>("/api/pieces/packages", { package: spec });
            name.value = "";
            return `Installed ${res.data.name} ${res.data.version} as ${res.data.pieceId}.`;
          });
        })}
      >
        <label class="field inline">
          <span>Install an npm package</span>
          <input required placeholder="@activepieces/piece-slack" disabled={busy.value !== null} {...bindText(name)} />
        </label>
        <button type="submit" disabled={busy.value !== null}>
          Add
        </button>
      </form>
      {packages.value.length === 0 ? (
        <p class="help">No piece packages are installed.</p>
      ) : (
        <Table columns={["Piece", "Package", "Version", "Actions", "Auth", "Installed"]} actions="Changes">
          {packages.value.map((p) => (
            <tr key={`${p.pieceId}@${p.version}`}>
              <td>
                <strong>{p.displayName}</strong> <code>{p.pieceId}</code>
              </td>
              <td class="small-text">{p.name}</td>
              <td>{p.version}</td>
              <td class="small-text">
                {p.actions}
                {p.unsupported.length > 0 && ` (unsupported property types: ${p.unsupported.join(", ")})`}
              </td>
              <td class="small-text">{p.authKind ?? "none"}</td>
              <td class="small-text">{when(p.installedAt)}</td>
              <td class="row">
                <button
                  type="button"
                  class="small"
                  disabled={busy.value !== null}
                  aria-label={`Upgrade ${p.pieceId}`}
                  onClick={() =>
                    void change(`Upgrading ${p.name}…`, async () => {
                      const res = await api.post<PiecePackage>(`/api/pieces/packages/${encodeURIComponent(p.pieceId)}/upgrade`, {});
                      return res.data.version === p.version ? `${p.name} ${p.version} is the newest.` : `Installed ${p.name} ${res.data.version}.`;
                    })
                  }
                >
                  Upgrade
                </button>
                <ConfirmButton
                  disabled={busy.value !== null}
                  label={`Remove ${p.pieceId} ${p.version}`}
                  question={`Remove ${p.name} ${p.version}? Workflows using it must be unpublished first.`}
                  onConfirm={() =>
                    change(`Removing ${p.name} ${p.version}…`, async () => {
                      await api.del(`/api/pieces/packages/${encodeURIComponent(p.pieceId)}`, { version: p.version });
                      return `Removed ${p.name} ${p.version}.`;
                    })
                  }
                >
                  Remove
                </ConfirmButton>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
