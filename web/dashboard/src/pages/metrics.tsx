/**
 * Metrics: charts of the node's own `GET /metrics`, scraped every few seconds while the page is
 * open — requests per second, mean latency, JSON-RPC calls by outcome — each with a time axis
 * (hh:mm:ss) and a value axis in its unit over a chosen time range, and the current gauges.
 */
import { useEffect, useState } from 'preact/hooks';
import { useDashboard } from '../app-context.ts';
import { size } from '../format.ts';
import { byLabel, parseMetrics, rate, total, type Sample } from '../metrics.ts';
import { Card, ErrorNote } from '../ui.tsx';

const INTERVAL_MS = 3000;
/** the time ranges a chart can show; points are kept for the longest */
const RANGES = [
  { label: '1 min', ms: 60_000 },
  { label: '5 min', ms: 300_000 },
  { label: '15 min', ms: 900_000 },
];
const KEEP = RANGES.at(-1)!.ms / INTERVAL_MS + 2;

interface Point {
  at: number;
  requests: number;
  latencyMs: number;
  calls: Record<string, number>;
}

/** The smallest of 1, 2, 2.5, 5 × 10^n at or above `v` (a round top for the y axis). */
export function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v - 1e-12) return m * p;
  return 10 * p;
}

const num = (v: number) => (v === 0 ? '0' : v < 0.1 ? v.toFixed(3) : v < 10 ? v.toFixed(2).replace(/\.?0+$/, '') : String(Math.round(v)));
const hms = (t: number) => new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

/**
 * A line chart with its axes: time along the bottom (the range's start, middle and end as hh:mm:ss),
 * the value up the side (0, half and the top, in the unit named above the axis).
 */
function Chart({ title, series, unit, testid, range, now }: { title: string; series: { at: number; v: number }[]; unit: string; testid: string; range: number; now: number }) {
  const W = 360;
  const H = 150;
  const L = 46;
  const R = 10;
  const T = 16;
  const B = 24;
  const from = now - range;
  const shown = series.filter((p) => p.at >= from);
  const top = niceCeil(Math.max(0, ...shown.map((p) => p.v)));
  const x = (t: number) => L + ((t - from) / range) * (W - L - R);
  const y = (v: number) => H - B - (v / top) * (H - T - B);
  const line = shown.map((p) => `${x(p.at).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
  const last = shown.at(-1)?.v;
  const yTicks = [0, top / 2, top];
  const xTicks = [from, from + range / 2, now];
  return (
    <figure class="chart" data-testid={testid}>
      <figcaption>
        {title}: <strong>{last === undefined ? '…' : `${num(last)} ${unit}`}</strong>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title} in ${unit}, ${hms(from)} to ${hms(now)}`}>
        <text x={L + 4} y={10} class="unit">
          {unit}
        </text>
        {yTicks.map((v) => (
          <g class="tick y">
            <line x1={L} x2={W - R} y1={y(v)} y2={y(v)} class="grid" />
            <text x={L - 4} y={y(v) + 3} text-anchor="end">
              {num(v)}
            </text>
          </g>
        ))}
        {xTicks.map((t, i) => (
          <text class="tick x" x={x(t)} y={H - 6} text-anchor={i === 0 ? 'start' : i === 2 ? 'end' : 'middle'}>
            {hms(t)}
          </text>
        ))}
        <line x1={L} y1={T} x2={L} y2={H - B} class="axis" />
        <line x1={L} y1={H - B} x2={W - R} y2={H - B} class="axis" />
        {shown.length > 1 ? <polyline points={line} class="series" /> : null}
      </svg>
    </figure>
  );
}

export function Metrics() {
  const { client } = useDashboard();
  const [points, setPoints] = useState<Point[]>([]);
  const [range, setRange] = useState(RANGES[1]!.ms);
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
  const now = points.at(-1)?.at ?? Date.now();
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
      <div class="row">
        <p class="muted grow">From the node's own GET /metrics, every {INTERVAL_MS / 1000} s while this page is open (kept for {RANGES.at(-1)!.label}).</p>
        <label class="check">
          Time range
          <select aria-label="time range" value={String(range)} onChange={(e) => setRange(Number(e.currentTarget.value))}>
            {RANGES.map((r) => (
              <option value={String(r.ms)}>last {r.label}</option>
            ))}
          </select>
        </label>
      </div>
      <div class="charts">
        <Chart title="Requests" unit="requests/s" series={points.map((p) => ({ at: p.at, v: p.requests }))} testid="chart-requests" range={range} now={now} />
        <Chart title="Mean latency" unit="ms" series={points.map((p) => ({ at: p.at, v: p.latencyMs }))} testid="chart-latency" range={range} now={now} />
        <Chart title="JSON-RPC calls" unit="calls/s" series={points.map((p) => ({ at: p.at, v: Object.values(p.calls).reduce((a, b) => a + b, 0) }))} testid="chart-calls" range={range} now={now} />
        {outcomes.map((o) => (
          <Chart title={`calls: ${o}`} unit="calls/s" series={points.map((p) => ({ at: p.at, v: p.calls[o] ?? 0 }))} testid={`chart-calls-${o}`} range={range} now={now} />
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
