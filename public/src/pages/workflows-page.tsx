/**
 * Workflows: folders, tags, search, status, last run; create (blank or from a template), duplicate,
 * import (./import-dialog.tsx), export one or all (a zip of the folder export) and move to a folder.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { Dialog } from "../components/dialog";
import { Pager } from "../components/pager";
import { ErrorNote } from "../components/error-note";
import { downloadBlob, downloadJson } from "../download";
import { zipFiles } from "../import-files";
import { StatusBadge, when } from "../format";
import { href, navigate } from "../router";
import { ImportDialog } from "./import-dialog";
import type { Folder, TemplateSummary as Template, Workflow, WorkflowSummary } from "../types";
import { useCall, useListed } from "../use-call";
import { Table } from "../components/table";
import { ConfirmButton } from "../components/confirm-button";
import { bindSelect, bindText, setTo } from "../bind";

const PAGE_SIZE = 25;

function NewWorkflowDialog({ onClose, folderId }: { onClose(): void; folderId: string | null }) {
  const name = useSignal("");
  const templateId = useSignal("");
  const templates = useListed<Template>("/api/templates", { limit: 100 });
  const { busy, error, call } = useCall();
  const submit = (event: Event) => {
    event.preventDefault();
    void call(async () => {
      const body = { name: name.value.trim() || "Untitled workflow", ...(folderId ? { folderId } : {}) };
      const res = templateId.value
        ? await api.post<Workflow>(`/api/templates/${templateId.value}/use`, body)
        : await api.post<Workflow>("/api/workflows", body);
      onClose();
      navigate(href.editor(res.data.id));
    });
  };
  return (
    <Dialog title="New workflow" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <label class="field">
          <span>Name</span>
          <input name="name" required {...bindText(name)} />
        </label>
        <label class="field">
          <span>Start from</span>
          <select {...bindSelect(templateId)}>
            <option value="">A blank workflow (manual trigger)</option>
            {templates.value.map((t) => (
              <option key={t.id} value={t.id}>
                Template: {t.name}
              </option>
            ))}
          </select>
        </label>
        {templateId.value && <p class="help">{templates.value.find((t) => t.id === templateId.value)?.description}</p>}
        <ErrorNote error={error.value} />
        <div class="row">
          <button type="submit" class="primary" disabled={busy.value}>
            Create
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Names a new folder, or renames one (PUT /api/folders/{id}); names are unique in a workspace, ignoring case. */
function FolderDialog({ folder, onClose, onSaved }: { folder: Folder | null; onClose(): void; onSaved(folder: Folder): void }) {
  const name = useSignal(folder?.name ?? "");
  const { error, call } = useCall();
  const submit = (event: Event) => {
    event.preventDefault();
    void call(async () => {
      const body = { name: name.value.trim() };
      const res = folder ? await api.put<Folder>(`/api/folders/${folder.id}`, body) : await api.post<Folder>("/api/folders", body);
      onSaved(res.data);
    });
  };
  return (
    <Dialog title={folder ? `Rename folder ${folder.name}` : "New folder"} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <label class="field">
          <span>Folder name</span>
          <input required maxLength={100} {...bindText(name)} />
        </label>
        <ErrorNote error={error.value} />
        <div class="row">
          <button type="submit" class="primary" disabled={!name.value.trim()}>
            {folder ? "Rename" : "Create folder"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function WorkflowsPage() {
  const q = useSignal("");
  const status = useSignal("");
  const tag = useSignal("");
  const folderId = useSignal<string | null>(null);
  const page = useSignal(1);
  const firstPage = () => {
    page.value = 1;
  };
  const rows = useSignal<WorkflowSummary[] | null>(null);
  const total = useSignal(0);
  const folders = useSignal<Folder[]>([]);
  const { error, call } = useCall();
  const dialog = useSignal<"new" | "import" | "folder" | "rename-folder" | null>(null);

  const loadFolders = () =>
    api
      .get<Folder[]>("/api/folders")
      .then((res) => {
        folders.value = res.data;
      })
      .catch(() => undefined);
  const load = async () => {
    const res = await api.get<WorkflowSummary[]>("/api/workflows", {
      q: q.value,
      status: status.value,
      tag: tag.value,
      folderId: folderId.value,
      page: page.value,
      limit: PAGE_SIZE,
    });
    rows.value = res.data;
    total.value = res.total ?? res.data.length;
  };
  useEffect(() => {
    void loadFolders();
  }, []);
  useEffect(() => {
    const timer = setTimeout(() => void call(load), 150); // debounce typing in the search box
    return () => clearTimeout(timer);
  }, [q.value, status.value, tag.value, folderId.value, page.value]);

  const act = (fn: () => Promise<unknown>) =>
    call(async () => {
      await fn();
      await load();
      await loadFolders();
    });
  const duplicate = (wf: WorkflowSummary) =>
    act(async () => {
      const exported = await api.get<Record<string, unknown>>(`/api/workflows/${wf.id}/export`);
      await api.post("/api/workflows/import", { ...exported.data, name: `Copy of ${wf.name}`, ...(wf.folderId ? { folderId: wf.folderId } : {}) });
    });
  const exportOne = (wf: WorkflowSummary) =>
    act(async () => {
      const exported = await api.get(`/api/workflows/${wf.id}/export`);
      downloadJson(`${wf.name.replace(/[^\w.-]+/g, "-")}.weft.json`, exported.data);
    });
  /** The folder export (docs/workflows-as-code.md) as a zip, which the Import dialog takes back. */
  const exportAll = () =>
    act(async () => {
      const exported = await api.get<{ files: Record<string, string> }>("/api/workflows/files");
      downloadBlob(`weft-workflows-${new Date().toISOString().slice(0, 10)}.zip`, new Blob([zipFiles(exported.data.files)], { type: "application/zip" }));
    });
  const pages = Math.max(1, Math.ceil(total.value / PAGE_SIZE));
  const currentFolder = folders.value.find((f) => f.id === folderId.value) ?? null;

  return (
    <main class="page with-sidebar">
      <nav class="sidebar" aria-label="Folders">
        <h2>Folders</h2>
        <ul class="folder-list">
          <li>
            <button
              type="button"
              class={`link${folderId.value === null ? " current" : ""}`}
              aria-current={folderId.value === null ? "true" : undefined}
              onClick={() => {
                folderId.value = null;
                page.value = 1;
              }}
            >
              All workflows
            </button>
          </li>
          <li>
            <button
              type="button"
              class={`link${folderId.value === "none" ? " current" : ""}`}
              aria-current={folderId.value === "none" ? "true" : undefined}
              onClick={() => {
                folderId.value = "none";
                page.value = 1;
              }}
            >
              Not in a folder
            </button>
          </li>
          {folders.value.map((f) => (
            <li key={f.id}>
              <button
                type="button"
                class={`link${folderId.value === f.id ? " current" : ""}`}
                aria-current={folderId.value === f.id ? "true" : undefined}
                onClick={() => {
                  folderId.value = f.id;
                  page.value = 1;
                }}
              >
                {f.name}
                {f.workflowCount !== undefined ? ` (${f.workflowCount})` : ""}
              </button>
            </li>
          ))}
        </ul>
        <div class="row">
          <button type="button" class="small" onClick={setTo(dialog, "folder")}>
            New folder
          </button>
          {currentFolder && (
            <button type="button" class="small" onClick={setTo(dialog, "rename-folder")}>
              Rename
            </button>
          )}
          {currentFolder && (
            <button
              type="button"
              class="small danger"
              onClick={() => {
                const count = currentFolder.workflowCount ?? 0;
                const question =
                  count > 0
                    ? `Delete the folder ${currentFolder.name}? Its ${count} workflow${count > 1 ? "s" : ""} move to “Not in a folder”; nothing else is deleted.`
                    : `Delete the empty folder ${currentFolder.name}?`;
                if (confirm(question))
                  void act(async () => {
                    await api.del(`/api/folders/${currentFolder.id}`, count > 0 ? { moveTo: "root" } : undefined);
                    folderId.value = null;
                  });
              }}
            >
              Delete
            </button>
          )}
        </div>
      </nav>
      <section class="content">
        <header class="page-head">
          <h1>Workflows</h1>
          {currentFolder && <span class="muted">in {currentFolder.name}</span>}
          {folderId.value === "none" && <span class="muted">not in a folder</span>}
          <span class="spacer" />
          <button type="button" onClick={setTo(dialog, "import")}>
            Import
          </button>
          <button type="button" onClick={() => void exportAll()}>
            Export all (zip)
          </button>
          <button type="button" class="primary" onClick={setTo(dialog, "new")}>
            New workflow
          </button>
        </header>
        <div class="filters" role="search">
          <label class="field inline">
            <span>Search</span>
            <input type="search" {...bindText(q, firstPage)} />
          </label>
          <label class="field inline">
            <span>Status</span>
            <select {...bindSelect(status, firstPage)}>
              <option value="">Any</option>
              <option value="draft">Draft</option>
              <option value="active">Active</option>
              <option value="paused">Paused</option>
            </select>
          </label>
          <label class="field inline">
            <span>Tag</span>
            <input
              value={tag.value}
              onChange={(e) => {
                tag.value = (e.target as HTMLInputElement).value.trim();
                page.value = 1;
              }}
            />
          </label>
        </div>
        <ErrorNote error={error.value} onDismiss={setTo(error, null)} />
        {rows.value === null && !error.value && <p class="muted">Loading…</p>}
        {rows.value?.length === 0 && <p class="empty">No workflows here yet. Create one with “New workflow”.</p>}
        {rows.value && rows.value.length > 0 && (
          <Table columns={["Name", "Status", "Trigger", "Tags", "Last run", "Updated"]} actions="Actions">
            {rows.value.map((wf) => (
              <tr key={wf.id}>
                <td>
                  <a href={href.editor(wf.id)}>{wf.name}</a>
                  {wf.description && <div class="muted small-text">{wf.description}</div>}
                </td>
                <td>
                  <StatusBadge status={wf.status} />
                  {wf.hasUnpublishedChanges && wf.latestVersionId && <span class="muted small-text"> edited</span>}
                </td>
                <td>{wf.triggerType}</td>
                <td>
                  {wf.tags.map((t) => (
                    <button type="button" class="tag" key={t} onClick={setTo(tag, t)} aria-label={`Filter by tag ${t}`}>
                      {t}
                    </button>
                  ))}
                </td>
                <td>
                  {wf.lastRun ? (
                    <>
                      <StatusBadge status={wf.lastRun.status} /> <span class="muted small-text">{when(wf.lastRun.startedAt)}</span>
                    </>
                  ) : (
                    <span class="muted">never</span>
                  )}
                </td>
                <td class="muted small-text">{when(wf.updatedAt)}</td>
                <td class="actions">
                  <select
                    aria-label={`Move ${wf.name} to a folder`}
                    value={wf.folderId ?? ""}
                    onChange={(e) => {
                      const target = (e.target as HTMLSelectElement).value || null;
                      void act(() => api.put(`/api/workflows/${wf.id}`, { folderId: target }));
                    }}
                  >
                    <option value="">No folder</option>
                    {folders.value.map((f) => (
                      <option key={f.id} value={f.id}>
                        {f.name}
                      </option>
                    ))}
                  </select>
                  <button type="button" class="small" onClick={() => duplicate(wf)} aria-label={`Duplicate ${wf.name}`}>
                    Duplicate
                  </button>
                  <button type="button" class="small" onClick={() => exportOne(wf)} aria-label={`Export ${wf.name}`}>
                    Export
                  </button>
                  <ConfirmButton
                    label={`Delete ${wf.name}`}
                    question={`Delete ${wf.name}? Its versions and runs go with it.`}
                    onConfirm={() => act(() => api.del(`/api/workflows/${wf.id}`))}
                  >
                    Delete
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </Table>
        )}
        <Pager page={page} pages={pages} position={`Page ${page.value} of ${pages}`} />
      </section>
      {dialog.value === "new" && (
        <NewWorkflowDialog folderId={folderId.value && folderId.value !== "none" ? folderId.value : null} onClose={setTo(dialog, null)} />
      )}
      {dialog.value === "import" && (
        <ImportDialog
          folderId={folderId.value && folderId.value !== "none" ? folderId.value : null}
          onClose={setTo(dialog, null)}
          onImported={() => {
            dialog.value = null;
            void load();
            void loadFolders();
          }}
        />
      )}
      {(dialog.value === "folder" || (dialog.value === "rename-folder" && currentFolder)) && (
        <FolderDialog
          folder={dialog.value === "rename-folder" ? currentFolder : null}
          onClose={setTo(dialog, null)}
          onSaved={(folder) => {
            dialog.value = null;
            folderId.value = folder.id;
            page.value = 1;
            void loadFolders();
          }}
        />
      )}
    </main>
  );
}
