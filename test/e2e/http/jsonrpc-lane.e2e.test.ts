/**
 * Issue #33 over real HTTP: `POST /jsonrpc` answers the same whether the fast lane
 * (src/http/fast-lane.ts) or fastify's full pipeline takes it. A request with an `Origin` always
 * goes the full way (its CORS headers are the full pipeline's), so each hostile body is sent both
 * ways and the statuses, `X-Auth-Error` and bodies compared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

let node: TestNode;
let token: string;

beforeAll(async () => {
  node = await startTestNode();
  const admin = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  token = (await admin.auth.login({ username: node.adminUser, password: node.adminPassword })).accessToken;
});
afterAll(async () => node?.destroy());

async function post(body: string, origin?: string) {
  const res = await fetch(`${node.url}/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(origin ? { origin } : {}) },
    body,
  });
  return { status: res.status, reason: res.headers.get('x-auth-error'), id: res.headers.get('x-request-id'), cors: res.headers.get('access-control-allow-origin'), body: await res.text() };
}

const env = (method: string, params: string, id = '7') => `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${params}}`;
const CASES: Array<[string, string]> = [
  ['malformed JSON', '{'],
  ['not an object', '[]'],
  ['too deep', '['.repeat(200)],
  ['wrong version', '{"jsonrpc":"1.0","id":1,"method":"execute"}'],
  ['no id', '{"jsonrpc":"2.0","method":"execute"}'],
  ['unknown method', env('nope', '{}')],
  ['bad context id', env('execute', '{"contextId":"x","method":"get","argsJson":{}}')],
  ['u64 id', env('execute', '{}', '18446744073709551615')],
  ['unknown context', env('execute', `{"contextId":"${'a'.repeat(64)}","method":"get","argsJson":{}}`)],
  ['sync_status', env('sync_status', '{}', '"s"')],
];

describe('POST /jsonrpc on the fast lane and on the full pipeline', () => {
  it.each(CASES)('answers %s the same both ways', async (_what, body) => {
    const lane = await post(body);
    const full = await post(body, 'http://127.0.0.1:9');
    expect(full.cors).toBe('http://127.0.0.1:9'); // the full pipeline took it
    expect(lane.cors).toBeNull();
    expect({ status: lane.status, reason: lane.reason, body: lane.body }).toEqual({ status: full.status, reason: full.reason, body: full.body });
    expect(lane.status).toBeLessThan(500);
    expect(lane.id).toMatch(/^[\w-]+-[0-9a-z]+$/);
  });
});
