/**
 * Where a thread's entry file is: `path` relative to src/ (e.g. "engine/worker.ts"). From source that is a
 * file of the tree; inside the compiled binary it is an extra entrypoint of build.ts, embedded relative to
 * the entrypoints' common root (src/).
 */
export function threadEntry(path: string): string {
  return import.meta.url.includes("$bunfs") ? `./${path}` : new URL(`../${path}`, import.meta.url).href;
}

/**
 * The same entry for node:worker_threads, which takes a file URL only as a URL object (from source) and an
 * embedded entry as the path threadEntry gives (inside the compiled binary, where it is no URL).
 */
export function nodeThreadEntry(path: string): string | URL {
  const entry = threadEntry(path);
  return entry.startsWith("file:") ? new URL(entry) : entry;
}
