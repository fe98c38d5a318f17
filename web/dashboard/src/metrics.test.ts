import { describe, expect, it } from 'vitest';
import { byLabel, parseMetrics, rate, total } from './metrics.ts';

const TEXT = `# HELP http_requests_total HTTP requests
# TYPE http_requests_total counter
http_requests_total{method="GET",path="/admin-api/contexts",status="2xx"} 3
http_requests_total{method="POST",path="/jsonrpc",status="2xx"} 2
http_requests_total{method="GET",path="/x",status="4xx"} 1
http_request_duration_seconds_bucket{method="GET",path="/x",status="4xx",le="+Inf"} 1
hearth_store_bytes{store="data"} 1024
hearth_store_bytes{store="blobs"} 2048
hearth_build_info{version="0.1.0"} 1
odd_label{v="a \\"quoted\\" \\\\ value"} 5
`;

describe('reading /metrics', () => {
  const samples = parseMetrics(TEXT);

  it('reads names, labels and values, skipping comments', () => {
    expect(samples).toHaveLength(8);
    expect(samples[0]).toEqual({ name: 'http_requests_total', labels: { method: 'GET', path: '/admin-api/contexts', status: '2xx' }, value: 3 });
    expect(samples.find((s) => s.name === 'http_request_duration_seconds_bucket')).toMatchObject({ labels: { le: '+Inf' }, value: 1 });
    expect(samples.find((s) => s.name === 'odd_label')?.labels.v).toBe('a "quoted" \\ value');
  });

  it('sums a family, optionally by matching labels', () => {
    expect(total(samples, 'http_requests_total')).toBe(6);
    expect(total(samples, 'http_requests_total', { status: '2xx' })).toBe(5);
    expect(total(samples, 'hearth_store_bytes')).toBe(3072);
    expect(total(samples, 'absent')).toBe(0);
  });

  it('groups by one label', () => {
    expect(byLabel(samples, 'http_requests_total', 'status')).toEqual({ '2xx': 5, '4xx': 1 });
  });

  it('turns counter deltas into rates, reading a reset as a fresh start', () => {
    expect(rate(10, 40, 10)).toBe(3);
    expect(rate(40, 5, 5)).toBe(1);
    expect(rate(1, 2, 0)).toBe(0);
  });
});
