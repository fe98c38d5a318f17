/**
 * `GET /metrics`: Prometheus text exposition (issue #6; product.md §11 and B8). Label values come
 * only from closed sets — route templates (never raw paths), methods, status classes, outcomes —
 * so series stay bounded whatever clients send. Access as the reference: unauthenticated on the API
 * listener (documented in docs/operator-guide.md).
 *
 * No client library: counters, gauges and histograms here are a few dozen lines and keep the
 * dependency list short.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../version.ts';
import { Text } from './response-schemas.ts';

type Labels = Record<string, string>;

const key = (labels: Labels) =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escape(labels[k]!)}"`)
    .join(',');

function escape(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** seconds; the reference's HTTP histogram buckets are not shown, these are Prometheus' defaults */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

class Counter {
  readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    this.incKey(key(labels), by);
  }
  /** `k` as {@link key} renders the labels */
  incKey(k: string, by = 1): void {
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`);
    return lines.join('\n');
  }
}

class Histogram {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  observe(labels: Labels, seconds: number): void {
    this.observeKey(key(labels), seconds);
  }
  /** `k` as {@link key} renders the labels */
  observeKey(k: string, seconds: number): void {
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) s.counts[i]!++;
    s.sum += seconds;
    s.count++;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const pre = k ? `${k},` : '';
      BUCKETS.forEach((b, i) => lines.push(`${this.name}_bucket{${pre}le="${b}"} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket{${pre}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${k ? `{${k}}` : ''} ${s.sum}`);
      lines.push(`${this.name}_count${k ? `{${k}}` : ''} ${s.count}`);
    }
    return lines.join('\n');
  }
}

/** A value read at scrape time (active streams, store size, ...). */
export interface GaugeSource {
  name: string;
  help: string;
  /** `counter` for a running total another component keeps (network traffic); default `gauge` */
  type?: 'gauge' | 'counter';
  /** one sample per label set; labels must come from a closed set */
  read(): Promise<Array<{ labels?: Labels; value: number }>> | Array<{ labels?: Labels; value: number }>;
}

export const JSONRPC_OUTCOMES = ['ok', 'app_error', 'rpc_error', 'invalid'] as const;
export type JsonRpcOutcome = (typeof JSONRPC_OUTCOMES)[number];
const OUTCOME_KEYS = new Map<string, string>(JSONRPC_OUTCOMES.map((outcome) => [outcome, key({ outcome })]));

export class Metrics {
  private readonly requests = new Counter('http_requests_total', 'HTTP requests by route template, method and status class');
  private readonly latency = new Histogram('http_request_duration_seconds', 'HTTP request latency by route template, method and status class');
  private readonly rpc = new Counter('hearth_jsonrpc_calls_total', 'JSON-RPC calls by outcome');
  private readonly gauges: GaugeSource[] = [];

  /** rendered label sets of `request`, by method, route and status class (all from closed sets) */
  private readonly requestKeys = new Map<string, string>();

  /** Called once per answered request. `route` must be a route template (or a fixed placeholder). */
  request(method: string, route: string, status: number, seconds: number): void {
    const m = METHODS.has(method) ? method : 'OTHER';
    const cls = `${Math.floor(status / 100)}xx`;
    const id = `${m} ${cls} ${route}`;
    let k = this.requestKeys.get(id);
    if (k === undefined) this.requestKeys.set(id, (k = key({ method: m, path: route, status: cls })));
    this.requests.incKey(k);
    this.latency.observeKey(k, seconds);
  }

  /** Called once per JSON-RPC call; its label set is rendered once per outcome (a closed set), not per call. */
  jsonrpc(outcome: JsonRpcOutcome): void {
    this.rpc.incKey(OUTCOME_KEYS.get(outcome) ?? key({ outcome }));
  }

  addGauge(source: GaugeSource): void {
    this.gauges.push(source);
  }

  async render(): Promise<string> {
    const mem = process.memoryUsage();
    const parts = [
      `# HELP hearth_build_info The running hearth release\n# TYPE hearth_build_info gauge\nhearth_build_info{version="${escape(VERSION)}"} 1`,
      `# HELP process_resident_memory_bytes Resident memory\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes ${mem.rss}`,
      `# HELP nodejs_heap_used_bytes V8 heap in use\n# TYPE nodejs_heap_used_bytes gauge\nnodejs_heap_used_bytes ${mem.heapUsed}`,
      `# HELP process_uptime_seconds Seconds since the process started\n# TYPE process_uptime_seconds gauge\nprocess_uptime_seconds ${Math.round(process.uptime())}`,
      this.requests.render(),
      this.latency.render(),
      this.rpc.render(),
    ];
    for (const g of this.gauges) {
      const samples = await g.read();
      const lines = [`# HELP ${g.name} ${g.help}`, `# TYPE ${g.name} ${g.type ?? 'gauge'}`];
      for (const s of samples) {
        const k = key(s.labels ?? {});
        lines.push(`${g.name}${k ? `{${k}}` : ''} ${s.value}`);
      }
      parts.push(lines.join('\n'));
    }
    return `${parts.join('\n')}\n`;
  }
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** The label for requests no route matched: never the raw path (unbounded). */
export const UNMATCHED_ROUTE = '(unmatched)';

export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics): void {
  const schema = { summary: 'Prometheus metrics (unauthenticated, as the reference)', response: { 200: Text('text/plain', 'Prometheus text format 0.0.4') } };
  app.get('/metrics', { schema }, async (_request, reply) => {
    reply.header('content-type', 'text/plain; version=0.0.4; charset=utf-8');
    return metrics.render();
  });
}

/** Bytes under each directory (the LevelDB data dir, the blob chunks), read at scrape time. */
/**
 * Walking the blob directory costs a stat per chunk, so one walk serves every scrape for
 * `maxAgeMs` (concurrent scrapes share the walk in flight): a size is a slow-moving gauge.
 */
export function storeSizeGauge(dirs: Record<string, string>, opts: { maxAgeMs?: number; now?: () => number } = {}): GaugeSource {
  const maxAgeMs = opts.maxAgeMs ?? 10_000;
  const now = opts.now ?? Date.now;
  let last: { at: number; samples: Promise<Array<{ labels: Labels; value: number }>> } | undefined;
  const walk = () => Promise.all(Object.entries(dirs).map(async ([store, dir]) => ({ labels: { store }, value: await dirBytes(dir) })));
  return {
    name: 'hearth_store_bytes',
    help: 'Bytes on disk by store (data = the embedded key-value store, blobs = blob chunks); refreshed at most every 10 s',
    read: () => {
      if (!last || now() - last.at >= maxAgeMs) last = { at: now(), samples: walk() };
      return last.samples;
    },
  };
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0; // not created yet, or removed under us: nothing to count
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) total += await dirBytes(path);
    else if (e.isFile()) total += await stat(path).then((s) => s.size, () => 0);
  }
  return total;
}
