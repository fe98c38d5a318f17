/**
 * Reading the node's `GET /metrics` (Prometheus text, src/http/metrics.ts) in the browser: samples
 * by name and labels, sums, and rates between two scrapes. Enough for the dashboard's charts; not a
 * general Prometheus parser (no timestamps, no exemplars).
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    if (!Number.isNaN(value)) out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** The sum of every sample of `name` whose labels include `match`. */
export function total(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Sums of `name` grouped by one label. */
export function byLabel(samples: Sample[], name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.name === name && s.labels[label] !== undefined) out[s.labels[label]!] = (out[s.labels[label]!] ?? 0) + s.value;
  return out;
}

/** Per-second rate of a counter between two scrapes `seconds` apart (a reset counts from zero). */
export function rate(before: number, after: number, seconds: number): number {
  if (seconds <= 0) return 0;
  return (after >= before ? after - before : after) / seconds;
}
