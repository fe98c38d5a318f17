import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Metrics, storeSizeGauge } from './metrics.ts';

describe('Metrics', () => {
  it('counts requests by template and status class, with a cumulative histogram', async () => {
    const m = new Metrics();
    m.request('GET', '/admin-api/blobs/:blobId', 200, 0.003);
    m.request('GET', '/admin-api/blobs/:blobId', 204, 0.2);
    m.request('GET', '/admin-api/blobs/:blobId', 404, 0.02);
    const text = await m.render();
    expect(text).toContain('http_requests_total{method="GET",path="/admin-api/blobs/:blobId",status="2xx"} 2');
    expect(text).toContain('http_requests_total{method="GET",path="/admin-api/blobs/:blobId",status="4xx"} 1');
    expect(text).toContain('http_request_duration_seconds_bucket{method="GET",path="/admin-api/blobs/:blobId",status="2xx",le="0.005"} 1');
    expect(text).toContain('http_request_duration_seconds_bucket{method="GET",path="/admin-api/blobs/:blobId",status="2xx",le="0.25"} 2');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",path="/admin-api/blobs/:blobId",status="2xx"} 2');
    expect(text).toMatch(/hearth_build_info\{version="[^"]+"\} 1/);
  });

  it('folds unknown methods into OTHER and escapes label values', async () => {
    const m = new Metrics();
    m.request('BREW', '/a"b\\c', 500, 0);
    expect(await m.render()).toContain('http_requests_total{method="OTHER",path="/a\\"b\\\\c",status="5xx"} 1');
  });

  it('counts JSON-RPC outcomes and reads gauges at scrape time', async () => {
    const m = new Metrics();
    m.jsonrpc('ok');
    m.jsonrpc('ok');
    m.jsonrpc('app_error');
    let streams = 3;
    m.addGauge({ name: 'hearth_event_streams_active', help: 'open streams', read: () => [{ labels: { transport: 'sse' }, value: streams }] });
    expect(await m.render()).toContain('hearth_jsonrpc_calls_total{outcome="ok"} 2');
    expect(await m.render()).toContain('hearth_event_streams_active{transport="sse"} 3');
    streams = 1;
    expect(await m.render()).toContain('hearth_event_streams_active{transport="sse"} 1');
  });

  it('measures directories recursively; a missing one counts 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hearth-metrics-'));
    try {
      await mkdir(join(dir, 'sub'));
      await writeFile(join(dir, 'a'), Buffer.alloc(10));
      await writeFile(join(dir, 'sub', 'b'), Buffer.alloc(5));
      let t = 0;
      const gauge = storeSizeGauge({ data: dir, blobs: join(dir, 'absent') }, { maxAgeMs: 1000, now: () => t });
      const samples = await gauge.read();
      expect(samples).toEqual([
        { labels: { store: 'data' }, value: 15 },
        { labels: { store: 'blobs' }, value: 0 },
      ]);
      // one walk serves scrapes within maxAgeMs; a later scrape walks again
      await writeFile(join(dir, 'c'), Buffer.alloc(7));
      t = 999;
      expect((await gauge.read())[0].value).toBe(15);
      t = 1000;
      expect((await gauge.read())[0].value).toBe(22);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
