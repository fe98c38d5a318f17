/**
 * The permission matrix of the node guard (auth-wire §5; auth spec "Authentication"): each guarded
 * route family × {admin token, client key, context-bound client key, expired, revoked, missing}.
 * Routes of later issues are not registered yet; the guard still decides for them, so "passes" is
 * any answer other than the guard's 401/403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { FakeClock } from '../../../src/auth/testkit.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

const CTX = '1'.repeat(64);
const OTHER_CTX = '2'.repeat(64);
const GROUP = '3'.repeat(64);
const ID = '4'.repeat(64);

type Who = 'admin' | 'client' | 'bound' | 'expired' | 'revoked' | 'missing';
type Outcome = 'pass' | 401 | 403;

interface Row {
  family: string;
  method: string;
  path: string;
  expect: Record<Who, Outcome>;
}

const common = { expired: 401, revoked: 401, missing: 401 } as const;

const ROWS: Row[] = [
  { family: 'context list', method: 'GET', path: '/admin-api/contexts', expect: { admin: 'pass', client: 'pass', bound: 403, ...common } },
  { family: 'own context', method: 'GET', path: `/admin-api/contexts/${CTX}`, expect: { admin: 'pass', client: 'pass', bound: 'pass', ...common } },
  { family: 'other context', method: 'GET', path: `/admin-api/contexts/${OTHER_CTX}`, expect: { admin: 'pass', client: 'pass', bound: 403, ...common } },
  { family: 'context delete', method: 'DELETE', path: `/admin-api/contexts/${CTX}`, expect: { admin: 'pass', client: 403, bound: 403, ...common } },
  { family: 'applications', method: 'GET', path: '/admin-api/applications', expect: { admin: 'pass', client: 'pass', bound: 403, ...common } },
  { family: 'groups', method: 'GET', path: `/admin-api/groups/${GROUP}`, expect: { admin: 'pass', client: 403, bound: 403, ...common } },
  { family: 'admin-only', method: 'GET', path: '/admin-api/peers', expect: { admin: 'pass', client: 403, bound: 403, ...common } },
  { family: 'blobs', method: 'GET', path: '/admin-api/blobs', expect: { admin: 'pass', client: 403, bound: 403, ...common } },
  { family: 'json-rpc', method: 'POST', path: '/jsonrpc', expect: { admin: 'pass', client: 403, bound: 'pass', ...common } },
  { family: 'event stream', method: 'GET', path: '/sse/session/x', expect: { admin: 'pass', client: 'pass', bound: 'pass', ...common } },
  { family: 'websocket', method: 'GET', path: '/ws', expect: { admin: 'pass', client: 'pass', bound: 'pass', ...common } },
  { family: 'key admin', method: 'GET', path: '/admin/keys', expect: { admin: 'pass', client: 403, bound: 403, ...common } },
  { family: 'identity', method: 'GET', path: '/admin/identity', expect: { admin: 'pass', client: 'pass', bound: 403, ...common } },
];

let node: TestNode;
let clock: FakeClock;
const tokens = {} as Record<Who, string | undefined>;

beforeAll(async () => {
  clock = new FakeClock(Date.now());
  node = await startTestNode({ clock });
  const admin = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  tokens.admin = (await admin.auth.login({ username: node.adminUser, password: node.adminPassword })).accessToken;
  const mint = async (req: Parameters<typeof admin.auth.createClientKey>[0]) => (await admin.auth.createClientKey(req)).data.access_token;
  tokens.client = await mint({ permissions: ['context:list', 'application:list', 'context:execute[' + CTX + ']'] });
  tokens.bound = await mint({ context_id: CTX, context_identity: ID, permissions: ['context:list', 'context:execute'] });
  tokens.expired = await mint({ permissions: ['context:list'] });
  tokens.missing = undefined;
  // expire only the "expired" token: others are re-minted after the jump
  clock.advance(15 * 60 + 61);
  tokens.admin = (await admin.auth.login({ username: node.adminUser, password: node.adminPassword })).accessToken;
  tokens.client = await mint({ permissions: ['context:list', 'application:list', 'context:execute[' + CTX + ']'] });
  tokens.bound = await mint({ context_id: CTX, context_identity: ID, permissions: ['context:list', 'context:execute'] });
  tokens.revoked = await mint({ permissions: ['context:list'] });
  await admin.auth.revoke(JSON.parse(Buffer.from(tokens.revoked.split('.')[1], 'base64url').toString()).sub);
});
afterAll(async () => node?.destroy());

async function outcome(method: string, path: string, token: string | undefined): Promise<{ outcome: Outcome; reason: string | null }> {
  const res = await fetch(node.url + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    body: method === 'POST' ? '{}' : undefined,
  });
  const reason = res.headers.get('x-auth-error');
  await res.arrayBuffer();
  if ((res.status === 401 || res.status === 403) && reason) return { outcome: res.status, reason };
  return { outcome: 'pass', reason };
}

describe.each(ROWS)('$family ($method $path)', (row) => {
  it.each(Object.keys(row.expect) as Who[])('%s', async (who) => {
    const got = await outcome(row.method, row.path, tokens[who]);
    expect(got.outcome).toBe(row.expect[who]);
    if (who === 'expired') expect(got.reason).toBe('token_expired');
    if (who === 'revoked') expect(got.reason).toBe('token_revoked');
    if (who === 'missing') expect(got.reason).toBe('missing_token');
  });
});

describe('stream routes', () => {
  it('accept the token as a query parameter', async () => {
    const res = await fetch(`${node.url}/sse/session/x?token=${tokens.admin}`);
    expect(res.headers.get('x-auth-error')).toBeNull();
    expect([401, 403]).not.toContain(res.status);
  });

  it('do not accept a query token on other guarded routes', async () => {
    const res = await fetch(`${node.url}/admin-api/contexts?token=${tokens.admin}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('x-auth-error')).toBe('missing_token');
  });

  it('OPTIONS bypasses the guard', async () => {
    const res = await fetch(`${node.url}/admin-api/contexts`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
  });
});
