/**
 * The Import dialog (docs/import.md, "The Import dialog"): a file is picked or dropped, its kind detected
 * (./import-files.ts), and the server's dry run shows what importing it would do — the plan, each foreign node's
 * outcome, the problems with their file and path — before anything is saved. "Import" then applies it and
 * opens the workflow it made.
 */
import { useSignal } from "@preact/signals";
import { ApiError, api } from "../api";
import { Dialog } from "../components/dialog";
import { ErrorNote } from "../components/error-note";
import { detectImport, type DetectedImport } from "../import-files";
import { href, navigate } from "../router";
import type { FilesImportPlanEntry as PlanEntry, ForeignImportReport as ForeignReport } from "../types";
import { Table } from "../components/table";
import { setTo } from "../bind";

interface Problem {
  file?: string;
  path: string;
  message: string;
}
type ReportEntry = ForeignReport["entries"][number];

/** What the dry run answered, in one shape for the three import routes. */
export interface Preview {
  plan: PlanEntry[];
  report?: ForeignReport;
  /** Problems that stop the import (a workflow file's, by file and path). */
  problems: Problem[];
  /** What does not stop it: the gate's warnings, and what the publish gate would say of a new draft. */
  notes: Problem[];
}

type Body = Record<string, unknown>;

/** The route and body of each kind; `dryRun` is added for the preview. */
function requestOf(detected: DetectedImport, folderId: string | null): { path: string; body: Body } {
  const folder = folderId ? { folderId } : {};
  if (detected.kind === "weft-json") return { path: "/api/workflows/import", body: { ...detected.doc, ...folder } };
  if (detected.kind === "weft-files") return { path: "/api/workflows/files", body: { files: detected.files } };
  return { path: "/api/workflows/import/foreign", body: { format: detected.kind, source: detected.source, ...folder } };
}

export async function previewImport(detected: DetectedImport, folderId: string | null): Promise<Preview> {
  const { path, body } = requestOf(detected, folderId);
  try {
    const { data } = await api.post<any>(path, { ...body, dryRun: true });
    if (detected.kind === "weft-json")
      return {
        plan: data.plan,
        problems: [],
        notes: [...data.diagnostics.errors, ...data.diagnostics.warnings].map((d: Problem) => ({ path: d.path, message: `publish gate: ${d.message}` })),
      };
    if (detected.kind === "weft-files") return { plan: data.plan, problems: [], notes: data.warnings };
    return { plan: [{ action: "create", kind: "workflow", name: detected.name }], report: data.report, problems: [], notes: [] };
  } catch (error) {
    const problems = error instanceof ApiError ? (error.details as { problems?: Problem[] } | undefined)?.problems : undefined;
    if (problems?.length) return { plan: [], problems, notes: [] };
    throw error;
  }
}

/** Applies the import; answers the workflow to open, or null when several were imported (the list shows them). */
export async function applyImport(detected: DetectedImport, folderId: string | null): Promise<string | null> {
  const { path, body } = requestOf(detected, folderId);
  const { data } = await api.post<any>(path, body);
  if (detected.kind === "weft-json") return data.id;
  if (detected.kind === "weft-files") {
    const written = (data.plan as PlanEntry[]).filter((p) => p.kind === "workflow" && (p.action === "create" || p.action === "update"));
    return written.length === 1 ? (written[0]!.id ?? null) : null;
  }
  return data.workflow.id;
}

/** Where a problem is: its file (when it has one) and the path in it. */
const FileAndPath = ({ file, path }: Problem) => (
  <>
    {file && <code>{file}</code>}
    {file && " "}
    <code>{path}</code>
  </>
);

const OUTCOME: Record<ReportEntry["outcome"], string> = { mapped: "mapped", approximated: "approximated", not_mapped: "not mapped" };

export function ImportReport({ preview }: { preview: Preview }) {
  const { plan, report, problems, notes } = preview;
  const counts = report
    ? (["mapped", "approximated", "not_mapped"] as const).map((o) => [o, report.entries.filter((e) => e.outcome === o).length] as const)
    : [];
  return (
    <div class="stack import-report">
      {problems.length > 0 && (
        <div class="note note-error" role="alert">
          <div>
            <strong>Nothing can be imported: {problems.length === 1 ? "1 problem" : `${problems.length} problems`}</strong>
            <ul class="import-problems">
              {problems.map((p) => (
                <li key={`${p.file}:${p.path}:${p.message}`} data-problem>
                  <FileAndPath {...p} />: {p.message}
                </li>
              ))}
            </ul>
          </div>
        </div>
      )}
      {plan.length > 0 && (
        <Table label="Plan" columns={["Action", "What", "Name", "File"]}>
          {plan.map((p) => (
            <tr key={`${p.kind}:${p.name}:${p.path}`} data-plan={p.action}>
              <td>{p.action}</td>
              <td>{p.kind}</td>
              <td>{p.name}</td>
              <td class="mono small-text">{p.path ?? ""}</td>
            </tr>
          ))}
        </Table>
      )}
      {report && (
        <>
          <p class="import-counts">{counts.map(([o, n]) => `${n} ${OUTCOME[o]}`).join(", ")}</p>
          <Table label="Report" columns={["Node", "Outcome", "Weft step", "Why"]}>
            {report.entries.map((e) => (
              <tr key={`${e.node}:${e.type}`} data-outcome={e.outcome}>
                <td>
                  {e.node}
                  <div class="muted small-text">{e.type}</div>
                </td>
                <td>
                  <span class={`badge outcome-${e.outcome}`}>{OUTCOME[e.outcome]}</span>
                </td>
                <td class="mono">{e.step ?? ""}</td>
                <td class="small-text">{e.note ?? ""}</td>
              </tr>
            ))}
          </Table>
          {report.hasPlaceholders && (
            <p class="help">A placeholder step (“REPLACE ME”) stands in for what is not mapped: the draft cannot be published until each is replaced.</p>
          )}
          {report.missingPieces.length > 0 && (
            <div class="help">
              Pieces this server lacks; install them first:
              <ul>
                {report.missingPieces.map((m) => (
                  <li key={m.package}>
                    <code>{m.command}</code>
                  </li>
                ))}
              </ul>
            </div>
          )}
        </>
      )}
      {notes.length > 0 && (
        <div class="help">
          Notes (they do not stop the import):
          <ul class="import-notes">
            {notes.map((n) => (
              <li key={`${n.file}:${n.path}:${n.message}`}>
                <FileAndPath {...n} />: {n.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

export function ImportDialog({ onClose, onImported, folderId }: { onClose(): void; onImported(): void; folderId: string | null }) {
  const detected = useSignal<DetectedImport | null>(null);
  const unknown = useSignal<string | null>(null);
  const preview = useSignal<Preview | null>(null);
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  const dragging = useSignal(false);

  const take = async (file: File) => {
    detected.value = null;
    preview.value = null;
    error.value = null;
    unknown.value = null;
    const found = detectImport(file.name, new Uint8Array(await file.arrayBuffer()));
    if (found.kind === "unknown") {
      unknown.value = found.message;
      return;
    }
    detected.value = found;
    busy.value = true;
    try {
      preview.value = await previewImport(found, folderId);
    } catch (e) {
      error.value = e;
    } finally {
      busy.value = false;
    }
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!detected.value) return;
    busy.value = true;
    error.value = null;
    try {
      const id = await applyImport(detected.value, folderId);
      onImported();
      if (id) navigate(href.editor(id));
    } catch (e) {
      error.value = e;
    } finally {
      busy.value = false;
    }
  };
  const ready = detected.value && preview.value && preview.value.problems.length === 0;
  return (
    <Dialog title="Import" onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        {/* biome-ignore lint/a11y/noStaticElementInteractions: the drop zone is for the mouse; the file input inside it is the keyboard's way */}
        <div
          class={`drop-zone${dragging.value ? " dragging" : ""}`}
          onDragOver={(e) => {
            e.preventDefault();
            dragging.value = true;
          }}
          onDragLeave={setTo(dragging, false)}
          onDrop={(e) => {
            e.preventDefault();
            dragging.value = false;
            const file = e.dataTransfer?.files?.[0];
            if (file) void take(file);
          }}
        >
          <label class="field">
            <span>A Weft workflow (.json, .yaml), a folder export (.zip), an n8n workflow or an Activepieces flow (.json)</span>
            <input
              type="file"
              name="file"
              accept=".json,.yaml,.yml,.zip,application/json,application/zip"
              onChange={(e) => {
                const file = (e.target as HTMLInputElement).files?.[0];
                if (file) void take(file);
              }}
            />
          </label>
          <p class="muted small-text">…or drop it here. Nothing is saved until you press Import.</p>
        </div>
        {unknown.value && (
          <div class="note note-error" role="alert">
            {unknown.value}
          </div>
        )}
        {detected.value && (
          <p class="import-detected">
            Detected: <strong>{detected.value.label}</strong> <span class="muted">{detected.value.name}</span>
          </p>
        )}
        {busy.value && !preview.value && <p class="muted">Checking…</p>}
        {preview.value && <ImportReport preview={preview.value} />}
        <ErrorNote error={error.value} />
        <div class="row">
          <button type="submit" class="primary" disabled={!ready || busy.value}>
            Import
          </button>
        </div>
      </form>
    </Dialog>
  );
}
