/**
 * Metrics: charts of the node's own `GET /metrics`, scraped every few seconds while the page is
 * open — requests per second, mean latency, JSON-RPC calls by outcome — and the current gauges.
 */
import { useEffect, useState } from 'preact/hooks';
import { useDashboard } from '../app-context.ts';
import { size } from '../format.ts';
import { byLabel, parseMetrics, rate, total, type Sample } from '../metrics.ts';
import { Card, ErrorNote } from '../ui.tsx';

const INTERVAL_MS = 3000;
const KEEP = 60;

interface Point {
  at: number;
  requests: number;
  latencyMs: number;
  calls: Record<string, number>;
}

function Chart({ title, points, unit, testid }: { title: string; points: number[]; unit: string; testid: string }) {
  const w = 300;
  const h = 80;
  const max = Math.max(1e-9, ...points);
  const step = points.length > 1 ? w / (points.length - 1) : w;
  const line = points.map((v, i) => `${(i * step).toFixed(1)},${(h - (v / max) * (h - 4) - 2).toFixed(1)}`).join(' ');
  const last = points.at(-1);
  return (
    <figure class="chart" data-testid={testid}>
      <figcaption>
        {title}: <strong>{last === undefined ? '…' : `${last < 10 ? last.toFixed(2) : Math.round(last)} ${unit}`}</strong>
      </figcaption>
      <svg viewBox={`0 0 ${w} ${h}`} role="img" aria-label={`${title} over the last ${points.length} samples`} preserveAspectRatio="none">
        <line x1="0" y1={h - 1} x2={w} y2={h - 1} class="axis" />
        {points.length > 1 ? <polyline points={line} class="series" /> : null}
      </svg>
      <small class="muted">peak {max < 10 ? max.toFixed(2) : Math.round(max)} {unit}</small>
    </figure>
  );
}

export function Metrics() {
  const { client } = useDashboard();
  const [points, setPoints] = useState<Point[]>([]);
  const [latest, setLatest] = useState<Sample[]>([]);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let previous: { at: number; samples: Sample[] } | undefined;
    let stopped = false;
    const ctrl = new AbortController();
    const scrape = async () => {
      try {
        const samples = parseMetrics(await client.admin.metrics({ signal: ctrl.signal }));
        const at = Date.now();
        setError(undefined);
        setLatest(samples);
        if (previous) {
          const secs = (at - previous.at) / 1000;
          const p = previous.samples;
          const dCount = total(samples, 'http_request_duration_seconds_count') - total(p, 'http_request_duration_seconds_count');
          const dSum = total(samples, 'http_request_duration_seconds_sum') - total(p, 'http_request_duration_seconds_sum');
          const before = byLabel(p, 'hearth_jsonrpc_calls_total', 'outcome');
          const calls: Record<string, number> = {};
          for (const [outcome, v] of Object.entries(byLabel(samples, 'hearth_jsonrpc_calls_total', 'outcome'))) calls[outcome] = rate(before[outcome] ?? 0, v, secs);
          const point = {
            at,
            requests: rate(total(p, 'http_requests_total'), total(samples, 'http_requests_total'), secs),
            latencyMs: dCount > 0 ? (dSum / dCount) * 1000 : 0,
            calls,
          };
          setPoints((pts) => [...pts, point].slice(-KEEP));
        }
        previous = { at, samples };
      } catch (err) {
        if (!ctrl.signal.aborted) setError(err);
      }
      if (!stopped) timer = setTimeout(scrape, INTERVAL_MS);
    };
    let timer = setTimeout(scrape, 0);
    return () => {
      stopped = true;
      clearTimeout(timer);
      ctrl.abort();
    };
  }, [client]);
  const outcomes = [...new Set(points.flatMap((p) => Object.keys(p.calls)))].sort();
  const routes = Object.entries(byLabel(latest, 'http_requests_total', 'path'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8);
  const stores = byLabel(latest, 'hearth_store_bytes', 'store');
  const streams = byLabel(latest, 'hearth_event_streams_active', 'transport');
  return (
    <div class="page">
      <h1>Metrics</h1>
      <ErrorNote error={error} />
      <p class="muted">From the node's own GET /metrics, every {INTERVAL_MS / 1000} s while this page is open.</p>
      <div class="charts">
        <Chart title="Requests" unit="/s" points={points.map((p) => p.requests)} testid="chart-requests" />
        <Chart title="Mean latency" unit="ms" points={points.map((p) => p.latencyMs)} testid="chart-latency" />
        <Chart title="JSON-RPC calls" unit="/s" points={points.map((p) => Object.values(p.calls).reduce((a, b) => a + b, 0))} testid="chart-calls" />
        {outcomes.map((o) => (
          <Chart title={`calls: ${o}`} unit="/s" points={points.map((p) => p.calls[o] ?? 0)} testid={`chart-calls-${o}`} />
        ))}
      </div>
      <Card title="Now">
        <dl class="facts">
          <dt>Requests answered</dt>
          <dd data-testid="requests-total">{total(latest, 'http_requests_total')}</dd>
          <dt>JSON-RPC calls</dt>
          <dd data-testid="calls-total">{total(latest, 'hearth_jsonrpc_calls_total')}</dd>
          <dt>Resident memory</dt>
          <dd>{size(total(latest, 'process_resident_memory_bytes'))}</dd>
          <dt>Store</dt>
          <dd>{Object.entries(stores).map(([k, v]) => `${k} ${size(v)}`).join(', ') || '–'}</dd>
          <dt>Open event streams</dt>
          <dd>{Object.entries(streams).map(([k, v]) => `${k} ${v}`).join(', ') || '–'}</dd>
        </dl>
      </Card>
      <Card title="Busiest routes">
        <table aria-label="busiest routes">
          <tbody>
            {routes.map(([path, n]) => (
              <tr>
                <td>
                  <code>{path}</code>
                </td>
                <td class="num">{n}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Card>
    </div>
  );
}
