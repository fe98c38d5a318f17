/**
 * Conformance: the node's public probes, peers, the OpenAPI document and metrics, through the SDK.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

let node: TestNode;
let conformance: Conformance;

beforeAll(async () => {
  node = await startTestNode();
  conformance = await Conformance.load(node.url);
});
afterAll(() => node.destroy());

it('answers every node-level route as documented', async () => {
  const anonymous = conformance.client();
  expect(await anonymous.admin.health()).toEqual({ status: 'alive' });
  expect(await anonymous.admin.ready()).toEqual({ status: 'ready' });
  expect(await anonymous.admin.isAuthed()).toEqual({ status: 'alive' });
  expect((await anonymous.admin.openApi()).openapi).toBe('3.1.0');
  expect(await anonymous.admin.metrics()).toContain('http_requests_total{');

  const admin = conformance.client();
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
  expect(await admin.admin.peers()).toEqual({ count: 0 });
  expect(await admin.admin.usage()).toEqual({ namespaces: [] });
  const status = await admin.admin.networkStatus();
  expect(status.localPeerId).toMatch(/^12D3KooW/);
  expect(status.listenAddrs).toHaveLength(1);

  conformance.assertAreaCovered('node');
});
