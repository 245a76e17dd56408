/**
 * Picks what a step does: a piece's action (or, for the trigger, a piece's trigger), plus the
 * built-in flow steps Router and Loop. One search box filters pieces, actions and descriptions;
 * "More integrations" opens the catalog (Settings → Integrations) searching for what was typed.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { listPieces, pieceDetail } from "../../catalog";
import { Dialog } from "../../components/dialog";
import { ErrorNote } from "../../components/error-note";
import { PieceIcon } from "../../components/piece-icon";
import { href, navigate } from "../../router";
import type { PieceDetail } from "../../types";
import { bindText } from "../../bind";

export type Pick =
  | { kind: "piece"; piece: PieceDetail; id: string; name: string; triggerType?: string }
  | { kind: "router" }
  | { kind: "loop" }
  | { kind: "manual" };

export function PiecePicker({ mode, title, onPick, onClose }: { mode: "action" | "trigger"; title: string; onPick(pick: Pick): void; onClose(): void }) {
  const query = useSignal("");
  const pieces = useSignal<PieceDetail[] | null>(null);
  const catalogError = useSignal<unknown>(null);
  useEffect(() => {
    listPieces()
      .then((list) => Promise.all(list.filter((p) => (mode === "action" ? p.actions.length : p.triggers.length) > 0).map((p) => pieceDetail(p.id))))
      .then((details) => {
        pieces.value = details;
      })
      .catch((error) => {
        catalogError.value = error;
      });
  }, [mode]);
  const q = query.value.trim().toLowerCase();
  const matches = (...texts: string[]) => !q || texts.some((text) => text.toLowerCase().includes(q));
  const core =
    mode === "action"
      ? [
          {
            key: "router",
            icon: "router",
            label: "Router",
            description: "Send the run down the first branch whose conditions hold",
            pick: { kind: "router" } as Pick,
          },
          { key: "loop", icon: "loop", label: "Loop on items", description: "Run the steps inside once per item of a list", pick: { kind: "loop" } as Pick },
        ]
      : [{ key: "manual", icon: "manual", label: "Manual trigger", description: "Started from the editor, the API or MCP", pick: { kind: "manual" } as Pick }];
  return (
    <Dialog title={title} onClose={onClose} wide>
      <label class="field">
        <span>Search pieces and {mode === "action" ? "actions" : "triggers"}</span>
        <input type="search" {...bindText(query)} placeholder="e.g. http, text, webhook" />
      </label>
      <ErrorNote error={catalogError.value} />
      <div class="picker" role="list">
        <section class="picker-group" role="listitem">
          <h3>Flow</h3>
          {core
            .filter((c) => matches(c.label, c.description))
            .map((c) => (
              <button type="button" class="pick" key={c.key} onClick={() => onPick(c.pick)}>
                <strong>
                  <PieceIcon pieceId={c.icon} name={c.label} size={18} /> {c.label}
                </strong>
                <span>{c.description}</span>
              </button>
            ))}
        </section>
        {pieces.value === null && !catalogError.value && <p class="muted">Loading pieces…</p>}
        {(pieces.value ?? []).map((piece) => {
          const entries = (mode === "action" ? piece.actions : piece.triggers) as Array<{ id: string; name: string; description: string; type?: string }>;
          const shown = entries.filter((entry) => matches(piece.id, piece.name, entry.id, entry.name, entry.description ?? ""));
          if (shown.length === 0) return null;
          return (
            <section class="picker-group" role="listitem" key={piece.id}>
              <h3>
                <PieceIcon pieceId={piece.id} icon={(piece as { icon?: string | null }).icon} name={piece.name} size={20} /> {piece.name}{" "}
                <span class="muted">
                  {piece.id} {piece.version}
                </span>
              </h3>
              {shown.map((entry) => (
                <button
                  type="button"
                  class="pick"
                  key={entry.id}
                  data-pick={`${piece.id}.${entry.id}`}
                  onClick={() => onPick({ kind: "piece", piece, id: entry.id, name: entry.name, triggerType: entry.type })}
                >
                  <strong>{entry.name}</strong>
                  <span>{entry.description}</span>
                </button>
              ))}
            </section>
          );
        })}
      </div>
      <div class="picker-more">
        <span class="muted small-text">Not here? Activepieces publishes hundreds of integrations.</span>
        <button
          type="button"
          class="small"
          onClick={() => {
            onClose();
            navigate(href.catalog(query.value.trim()));
          }}
        >
          More integrations{query.value.trim() ? ` for “${query.value.trim()}”` : ""}
        </button>
      </div>
    </Dialog>
  );
}
