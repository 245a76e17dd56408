/**
 * Reads Prometheus' text exposition format as a scraper does, strictly: every line is a comment or a sample,
 * or parsing throws naming the line.
 *   const text = (await t.req("GET", "/metrics")).text;
 *   sampleValue(text, "weft_runs_finished_total", { status: "completed" }) // summed over the other labels
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;

export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? "";
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const label = LABEL.exec(body);
      if (!label) throw new Error(`bad labels in: ${line}`);
      labels[label[1]!] = label[2]!;
    }
    // As Prometheus reads a value (Go's ParseFloat): NaN and Inf in any case; prom-client writes NaN as "Nan".
    const raw = match[3]!;
    const value = /^nan$/i.test(raw) ? Number.NaN : /^[+-]?inf$/i.test(raw) ? (raw.startsWith("-") ? -1 : 1) * Number.POSITIVE_INFINITY : Number(raw);
    if (Number.isNaN(value) && !/^nan$/i.test(raw)) throw new Error(`bad value in: ${line}`);
    samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none has them). */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const sample of parseSamples(text)) {
    if (sample.name !== name) continue;
    if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) sum += sample.value;
  }
  return sum;
}

/** Each metric family's declared type (`# TYPE name type`). */
export function familyTypes(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}
