/**
 * Where a thread's entry file is. From source it sits in this folder; inside the compiled binary it is an
 * extra entrypoint of build.ts, embedded relative to the entrypoints' common root (src/).
 */
export function threadEntry(file: string): string {
  return import.meta.url.includes("$bunfs") ? `./engine/${file}` : new URL(`./${file}`, import.meta.url).href;
}
