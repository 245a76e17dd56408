/**
 * What a file dropped on the Import dialog is (docs/import.md, "The Import dialog"), and the zip of a folder
 * export both ways (fflate, in the browser). Pure functions of the file's name and bytes: the dialog sends what
 * they find to the server's dry run, which answers the report.
 */
import { strFromU8, strToU8, unzipSync, zipSync } from "fflate";

export type DetectedImport =
  /** An export document of one workflow (GET /api/workflows/{id}/export): POST /api/workflows/import. */
  | { kind: "weft-json"; label: string; name: string; doc: Record<string, unknown> }
  /** Workflow files (docs/workflows-as-code.md), one YAML file or a zipped folder: POST /api/workflows/files. */
  | { kind: "weft-files"; label: string; name: string; files: Record<string, string> }
  /** A workflow of another tool: POST /api/workflows/import/foreign. */
  | { kind: "n8n" | "activepieces"; label: string; name: string; source: Record<string, unknown> };

export type Detection = DetectedImport | { kind: "unknown"; message: string };

const KNOWN =
  "Weft imports a workflow export (.json), a workflow file (.yaml), a folder export (.zip), an n8n workflow (.json) or an Activepieces flow or template (.json)";

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const nameOf = (value: unknown, fallback: string) => (typeof value === "string" && value.trim() ? value.trim() : fallback);
const baseName = (fileName: string) => fileName.replace(/^.*[\\/]/, "");

/** A zip's local file header starts with "PK\x03\x04". */
const isZip = (bytes: Uint8Array) => bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;

export function detectImport(fileName: string, bytes: Uint8Array): Detection {
  const file = baseName(fileName);
  if (isZip(bytes)) return detectZip(file, bytes);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes).replace(/^\uFEFF/, "");
  } catch {
    return { kind: "unknown", message: `${file} is neither text (UTF-8) nor a zip. ${KNOWN}.` };
  }
  if (!text.trim()) return { kind: "unknown", message: `${file} is empty. ${KNOWN}.` };
  if (/\.ya?ml$/i.test(file)) {
    const stem = file.replace(/\.ya?ml$/i, "");
    return { kind: "weft-files", label: "Weft workflow file (YAML)", name: stem, files: { [`workflows/${stem}.yaml`]: text } };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    return { kind: "unknown", message: `${file} is not JSON (${(error as Error).message}), nor named .yaml or .zip. ${KNOWN}.` };
  }
  return detectJson(file, doc);
}

export function detectJson(file: string, doc: unknown): Detection {
  // n8n's command line exports a list of workflows; one at a time here.
  if (Array.isArray(doc)) {
    if (doc.length === 1 && isObject(doc[0]) && Array.isArray(doc[0].nodes)) return detectJson(file, doc[0]);
    return { kind: "unknown", message: `${file} holds a list of ${doc.length} items; import one n8n workflow at a time. ${KNOWN}.` };
  }
  if (!isObject(doc)) return { kind: "unknown", message: `${file} holds JSON that is not an object. ${KNOWN}.` };
  if ("weftExport" in doc) return { kind: "weft-json", label: "Weft workflow export (JSON)", name: nameOf(doc.name, "Imported workflow"), doc };
  if (doc.weftFormat === 1 && isObject(doc.files))
    return { kind: "weft-files", label: "Weft folder export (JSON)", name: file, files: doc.files as Record<string, string> };
  if (Array.isArray(doc.nodes) && isObject(doc.connections)) return { kind: "n8n", label: "n8n workflow", name: nameOf(doc.name, file), source: doc };
  const flow = isObject(doc.template) ? doc.template : isObject(doc.version) ? doc.version : doc;
  if (isObject(flow.trigger))
    return {
      kind: "activepieces",
      label: doc.template ? "Activepieces template" : "Activepieces flow",
      name: nameOf(doc.name ?? flow.displayName, file),
      source: doc,
    };
  return {
    kind: "unknown",
    message: `${file} is JSON but not a workflow Weft knows: a Weft export has weftExport, an n8n workflow nodes and connections, an Activepieces flow a trigger (or template.trigger). ${KNOWN}.`,
  };
}

/** A zipped folder export: its workflow files, under a single top folder or not (as archivers make them). */
function detectZip(file: string, bytes: Uint8Array): Detection {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes);
  } catch (error) {
    return { kind: "unknown", message: `${file} looks like a zip but cannot be read (${(error as Error).message}).` };
  }
  const paths = Object.keys(entries).filter((p) => !p.endsWith("/") && !/(^|\/)(__MACOSX|\.DS_Store)/.test(p));
  const tops = new Set(paths.map((p) => p.split("/")[0]));
  const strip =
    tops.size === 1 && paths.every((p) => p.includes("/")) && ![...tops].some((t) => t === "workflows" || t === "variables") ? `${[...tops][0]}/` : "";
  const files: Record<string, string> = {};
  for (const path of paths) files[path.slice(strip.length)] = strFromU8(entries[path]!);
  if (!Object.keys(files).some((p) => p.startsWith("workflows/")))
    return { kind: "unknown", message: `${file} holds no workflows/ folder: a folder export has workflows/<name>.yaml files (docs/workflows-as-code.md).` };
  return { kind: "weft-files", label: "Weft folder export (zip)", name: file, files };
}

/** The folder export as a zip: path → text, as GET /api/workflows/files answers it. */
export const zipFiles = (files: Record<string, string>) =>
  // fflate allocates plain ArrayBuffers, which a Blob takes.
  zipSync(Object.fromEntries(Object.entries(files).map(([path, text]) => [path, strToU8(text)])), { level: 6 }) as Uint8Array<ArrayBuffer>;
