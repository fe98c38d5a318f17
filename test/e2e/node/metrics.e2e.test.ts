/**
 * `GET /metrics` against a real node: unauthenticated as the reference, route templates as labels
 * (never raw paths, so ids and junk URLs cannot grow the series), store size reported.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

let node: TestNode;

beforeAll(async () => {
  node = await startTestNode();
});
afterAll(async () => node?.destroy());

it('answers Prometheus text without a token, labelled by route template', async () => {
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  const id = 'ab'.repeat(32);
  await client.blobs.head(id).catch(() => undefined); // 404 on a templated route
  await fetch(`${node.url}/no/such/path/${id}`); // unmatched
  const res = await fetch(`${node.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  expect(text).toMatch(/http_requests_total\{method="POST",path="\/auth\/token",status="2xx"\} 1/);
  expect(text).toMatch(/http_requests_total\{method="HEAD",path="\/admin-api\/blobs\/:[a-zA-Z]+",status="4xx"\} 1/);
  expect(text).toMatch(/http_requests_total\{method="GET",path="\(unmatched\)",status="4xx"\} 1/);
  expect(text).not.toContain(id);
  expect(text).toMatch(/hearth_store_bytes\{store="data"\} [1-9]\d*/);
});

it('counts JSON-RPC outcomes and open event streams', async () => {
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  const { accessToken } = await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  const auth = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
  const bad = await fetch(`${node.url}/jsonrpc`, { method: 'POST', headers: auth, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'no_such_method', params: {} }) });
  await bad.arrayBuffer();
  const parse = await fetch(`${node.url}/jsonrpc`, { method: 'POST', headers: auth, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'execute', params: {} }) });
  expect((await parse.json()).error.type).toBe('ParseError');

  const stream = new AbortController();
  const sse = await fetch(`${node.url}/sse`, { headers: { authorization: `Bearer ${accessToken}` }, signal: stream.signal });
  const reader = sse.body!.getReader();
  await reader.read(); // the connect frame: the stream is open
  const text = await (await fetch(`${node.url}/metrics`)).text();
  stream.abort();
  expect(text).toMatch(/hearth_jsonrpc_calls_total\{outcome="invalid"\} 2/);
  expect(text).toMatch(/hearth_event_streams_active\{transport="sse"\} 1/);
  expect(text).toMatch(/hearth_event_streams_active\{transport="ws"\} 0/);
  for (const outcome of ['retried', 'recovered', 'exhausted', 'quarantined']) expect(text).toContain(`hearth_sync_apply_failures_total{outcome="${outcome}"} 0`);
});
