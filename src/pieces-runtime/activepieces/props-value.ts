/**
 * Inside the piece host: a step's evaluated config becomes the `propsValue` an Activepieces action
 * expects — defaults filled in, JSON text parsed for JSON properties, and FILE properties turned into
 * the framework's file object (filename, data, extension, base64) from a data: URL (what
 * `context.files.write` returns), an http(s) URL (fetched through the guarded fetch) or
 * `{ base64, filename }`.
 */
import type { RawProp } from "./describe";

/** The shape of the framework's ApFile, which pieces read by duck typing. */
export class PieceFile {
  constructor(
    readonly filename: string,
    readonly data: Buffer,
    readonly extension?: string,
  ) {}

  get base64(): string {
    return this.data.toString("base64");
  }
}

export async function propsValueFor(props: Record<string, RawProp>, config: Record<string, unknown>): Promise<Record<string, unknown>> {
  const value: Record<string, unknown> = { ...config };
  for (const [key, prop] of Object.entries(props)) {
    if (value[key] === undefined && prop.defaultValue !== undefined) value[key] = prop.defaultValue;
    const given = value[key];
    if (given === undefined || given === null) continue;
    if (prop.type === "JSON" && typeof given === "string") value[key] = parseJson(given, key);
    else if (prop.type === "FILE") value[key] = await fileOf(given, key);
  }
  return value;
}

function parseJson(text: string, key: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`property "${key}" must be JSON; the text given does not parse`);
  }
}

async function fileOf(given: unknown, key: string): Promise<PieceFile> {
  if (given instanceof PieceFile) return given;
  if (typeof given === "object" && given !== null && typeof (given as { base64?: unknown }).base64 === "string") {
    const file = given as { base64: string; filename?: string; fileName?: string };
    const name = file.filename ?? file.fileName ?? "file";
    return new PieceFile(name, Buffer.from(file.base64, "base64"), extensionOf(name));
  }
  if (typeof given !== "string") throw new Error(`property "${key}" is a file: give a data: URL, an http(s) URL or { "base64", "filename" }`);
  if (given.startsWith("data:")) {
    const comma = given.indexOf(",");
    if (comma < 0) throw new Error(`property "${key}": the data: URL has no data`);
    const header = given.slice(5, comma).split(";");
    const nameParam = header.find((part) => part.startsWith("name="));
    const name = nameParam ? decodeURIComponent(nameParam.slice(5)) : "file";
    const body = given.slice(comma + 1);
    const data = header.includes("base64") ? Buffer.from(body, "base64") : Buffer.from(decodeURIComponent(body));
    return new PieceFile(name, data, extensionOf(name));
  }
  if (/^https?:\/\//i.test(given)) {
    const response = await fetch(given); // the host's fetch is the guarded one
    if (!response.ok) throw new Error(`property "${key}": downloading ${given} answered ${response.status}`);
    const name = decodeURIComponent(new URL(given).pathname.split("/").pop() || "file");
    return new PieceFile(name, Buffer.from(await response.arrayBuffer()), extensionOf(name));
  }
  throw new Error(`property "${key}" is a file: give a data: URL, an http(s) URL or { "base64", "filename" }`);
}

function extensionOf(name: string): string | undefined {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1) : undefined;
}
