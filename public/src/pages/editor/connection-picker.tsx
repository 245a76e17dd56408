/** Picks the step's connection among the workspace's connections of the same piece, or makes one. */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { pieceDetail } from "../../catalog";
import { ConnectionForm } from "../../components/connection-form";
import { Dialog } from "../../components/dialog";
import { ErrorNote } from "../../components/error-note";
import { authorizeConnection, listConnections } from "../../connections";
import type { Connection, PieceDetail } from "../../types";
import { useCall } from "../../use-call";
import { setTo } from "../../bind";

export function ConnectionPicker({
  pieceId,
  actionId,
  kind,
  value,
  onChange,
}: {
  pieceId: string;
  actionId: string;
  kind: "actions" | "triggers";
  value?: string;
  onChange(id: string | undefined): void;
}) {
  const piece = useSignal<PieceDetail | null>(null);
  const connections = useSignal<Connection[]>([]);
  const creating = useSignal(false);
  const { error, call } = useCall();
  const reload = async () => {
    connections.value = await listConnections(pieceId);
  };
  useEffect(() => {
    pieceDetail(pieceId)
      .then((p) => {
        piece.value = p;
        if (p.auth) void call(reload);
      })
      .catch(() => undefined);
  }, [pieceId]);
  const p = piece.value;
  if (!p?.auth) return null;
  const action = kind === "actions" ? p.actions.find((a) => a.id === actionId) : undefined;
  if (action && action.requiresAuth === false && !value) return null;
  const selected = connections.value.find((c) => c.id === value);
  const id = `conn-${pieceId}-${actionId}`;
  return (
    <div class="field">
      <label for={id}>Connection</label>
      <div class="row">
        <select id={id} value={value ?? ""} onChange={(e) => onChange((e.target as HTMLSelectElement).value || undefined)}>
          <option value="">— choose a {p.name} connection —</option>
          {connections.value.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
              {c.status !== "active" ? ` (${c.status})` : ""}
            </option>
          ))}
        </select>
        <button type="button" class="small" onClick={setTo(creating, true)}>
          New connection
        </button>
        {selected && selected.status !== "active" && p.auth.kind === "oauth2" && (
          <button
            type="button"
            class="small"
            onClick={() =>
              call(async () => {
                await authorizeConnection(selected.id);
                await reload();
              })
            }
          >
            Connect
          </button>
        )}
      </div>
      <ErrorNote error={error.value} />
      {creating.value && (
        <Dialog title={`New ${p.name} connection`} onClose={setTo(creating, false)}>
          <ConnectionForm
            piece={p}
            onCreated={async (connection) => {
              creating.value = false;
              await call(reload);
              onChange(connection.id);
            }}
          />
        </Dialog>
      )}
    </div>
  );
}
