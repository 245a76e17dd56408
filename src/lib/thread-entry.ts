/**
 * Where a thread's entry file is: `path` relative to src/ (e.g. "engine/worker.ts"). From source that is a
 * file of the tree; inside the compiled binary it is an extra entrypoint of build.ts, embedded relative to
 * the entrypoints' common root (src/).
 */
export function threadEntry(path: string): string {
  return import.meta.url.includes("$bunfs") ? `./${path}` : new URL(`../${path}`, import.meta.url).href;
}
