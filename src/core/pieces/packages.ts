/**
 * Installed piece packages (Activepieces community pieces from the npm registry or a tarball): list, add,
 * upgrade and remove, for the API, the UI and `weft pieces`. A version that a published workflow runs
 * cannot be removed: the refusal names the workflows. Packages belong to the server (every workspace sees
 * the pieces they add), so changing them takes workspace:admin.
 */
import { AppError } from "../../http/errors";
import type { Logger } from "../../http/logger";
import { type CatalogPage, type CatalogQuery, PackageError, type PackageView, type PieceCatalog, type PiecePackages } from "../../pieces-runtime/activepieces";
import type { PieceRegistry } from "../../pieces-runtime/registry";
import type { FlowVersionT } from "../../schema/workflow";
import { walk } from "../workflows/tree";

export interface LiveWorkflowSource {
  liveWorkflows(): Promise<Array<{ workflow: { id: string; name: string }; version: { definition: FlowVersionT } }>>;
}

export interface PackagesServiceOptions {
  packages: PiecePackages;
  /** The registry's pieces, browsable (GET /api/pieces/catalog). */
  catalog: PieceCatalog;
  registry: PieceRegistry;
  workflows: LiveWorkflowSource;
  log: Logger;
}

export class PackagesService {
  constructor(private readonly o: PackagesServiceOptions) {}

  list(): PackageView[] {
    return this.o.packages.list();
  }

  /** One page of the catalog: what the registry serves, installed or not, with updates flagged. */
  catalog(query: CatalogQuery): Promise<CatalogPage> {
    return this.o.catalog.search(query);
  }

  /** Stops the piece host processes (server shutdown). */
  stop(): void {
    this.o.packages.stop();
  }

  async add(spec: string): Promise<PackageView> {
    const installed = await this.refusing(() => this.o.packages.add(spec));
    // The registry's pages are asked again: what was just installed may be newer than a cached page.
    this.o.catalog.forget();
    this.o.log.info("piece package installed", { package: installed.name, version: installed.version, pieceId: installed.pieceId });
    return installed;
  }

  /** Installs the newest version beside the installed ones (pinned steps keep theirs). */
  async upgrade(pieceId: string): Promise<PackageView> {
    const [newest] = this.o.packages.versions(pieceId);
    if (!newest) throw new AppError("NOT_FOUND", `no package is installed as piece ${pieceId}; GET /api/pieces/packages lists them`);
    return this.add(`${newest.name}@latest`);
  }

  /** Removes one version, or every version when none is named; refused while a published workflow runs it. */
  async remove(pieceId: string, version?: string): Promise<PackageView[]> {
    const held = this.o.packages.versions(pieceId);
    if (held.length === 0) throw new AppError("NOT_FOUND", `no package is installed as piece ${pieceId}; GET /api/pieces/packages lists them`);
    const targets = version === undefined ? held : held.filter((pkg) => pkg.version === version);
    if (targets.length === 0) {
      throw new AppError("NOT_FOUND", `${pieceId} ${version} is not installed; installed versions: ${held.map((pkg) => pkg.version).join(", ")}`);
    }
    for (const target of targets) {
      const users = await this.liveUsers(pieceId, target.version);
      if (users.length > 0) {
        throw new AppError(
          "CONFLICT",
          `${pieceId} ${target.version} is run by published workflows: ${users.map((w) => `"${w.name}" (${w.id})`).join(", ")}; unpublish them or pin their steps to another installed version first. Nothing was removed`,
          { workflows: users },
        );
      }
    }
    const removed = targets.map((target) => this.o.packages.remove(pieceId, target.version));
    for (const pkg of removed) this.o.log.info("piece package removed", { package: pkg.name, version: pkg.version, pieceId });
    return removed;
  }

  /** Published workflows with a step that resolves to this version. */
  private async liveUsers(pieceId: string, version: string): Promise<Array<{ id: string; name: string }>> {
    const users: Array<{ id: string; name: string }> = [];
    for (const { workflow, version: published } of await this.o.workflows.liveWorkflows()) {
      for (const { node } of walk(published.definition)) {
        if (node.pieceId === pieceId && this.o.registry.get(pieceId, node.pieceVersion)?.version === version) {
          users.push({ id: workflow.id, name: workflow.name });
          break;
        }
      }
    }
    return users;
  }

  private async refusing<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof PackageError) throw new AppError("UNPROCESSABLE", error.message);
      throw error;
    }
  }
}
