/**
 * A load balancer's probe, in a process of its own: calls GET /healthz on each URL given, one call after another
 * per URL (PROBE_GAP_MS apart), until a line arrives on standard input or it closes, then prints each URL's answer
 * times in ms, sorted, as one JSON array of arrays.
 *
 * Why a process of its own: the bench that starts it also runs the latency proxy between Weft and PostgreSQL in
 * its event loop (0.2 cores at 800 list reads a second), and a probe timed there waited for the proxy's work as
 * well as for the instance. A probe must time only the instance it calls.
 *
 *   bun bench/_healthz-prober.ts http://127.0.0.1:PORT [http://127.0.0.1:OTHER …]
 */

export {};

/** Pause between two calls to one URL. */
const PROBE_GAP_MS = 5;

const urls = process.argv.slice(2);
if (urls.length === 0) throw new Error("usage: bun bench/_healthz-prober.ts URL [URL …]");

let stopped = false;
void (async () => {
  for await (const _ of Bun.stdin.stream()) break;
  stopped = true;
})();

async function probe(baseUrl: string): Promise<number[]> {
  const ms: number[] = [];
  while (!stopped) {
    const t0 = performance.now();
    const res = await fetch(`${baseUrl}/healthz`);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${baseUrl}/healthz answered ${res.status}`);
    ms.push(performance.now() - t0);
    await Bun.sleep(PROBE_GAP_MS);
  }
  return ms.sort((a, b) => a - b);
}

console.log(JSON.stringify(await Promise.all(urls.map(probe))));
process.exit(0);
