/**
 * `GET /metrics` against a real node: unauthenticated as the reference, route templates as labels
 * (never raw paths, so ids and junk URLs cannot grow the series), store size reported.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../src/client/index.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

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
