/**
 * The permission matrix (issue #17 "Keep it fixed"): every route the node registers, read from its
 * route catalogue (so a route added later is in it without editing this file), against every kind
 * of credential: none, an admin token, an unbound client key, a key bound to another context, an
 * expired token, a revoked key, and a client key whose root key was revoked.
 *
 * What each cell must answer is derived, not listed: from the route table's declaration of the
 * route (`declaredAccess`: public, or guarded with a permission), and from the spec's rules for
 * credentials (auth spec "Errors": an invalid token is 401; a client key outside its bound contexts
 * and groups is 403; `X-Auth-Error` names the reason). A route without a declaration fails the
 * first test, whatever the fallback would do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindingOf, mayActOn } from '../../../src/auth/binding.ts';
import { satisfies } from '../../../src/auth/permissions.ts';
import { classifyRoute, declaredAccess, type Declared } from '../../../src/auth/route-permissions.ts';
import { FakeClock } from '../../../src/auth/testkit.ts';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import type { RouteRecord } from '../../../src/http/openapi.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

type Who = 'none' | 'admin' | 'client' | 'boundElsewhere' | 'expired' | 'revoked' | 'parentRevoked';
const WHO: Who[] = ['none', 'admin', 'client', 'boundElsewhere', 'expired', 'revoked', 'parentRevoked'];

/** The context the bound key is bound to: no route below names it. */
const BOUND_CTX = '9'.repeat(64);
const CLIENT_PERMISSIONS = ['context:list', 'context:execute', 'application:list', 'blob:list', 'group:list', 'namespace:list'];

/** A value for each path parameter name; ids are distinct 64-hex strings, none of them BOUND_CTX. */
const SAMPLES: Record<string, string> = {
  scope: 'context',
  name: 'alias-1',
  package: 'com.example.app',
  sid: 'session-1',
  key_id: 'no-such-key',
  client_id: 'no-such-client',
  wildcard: 'x',
};
const hexFor = (name: string) => ((Array.from(name).reduce((a, c) => a + c.charCodeAt(0), 0) % 8) + 1).toString().repeat(64);
const concrete = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, (_m, p: string) => SAMPLES[p] ?? hexFor(p)).replace(/\*$/, 'x');

type Outcome = { status: 401 | 403; reason: string } | 'pass';

/** The spec's answer for one cell, from the route's declaration. */
function expected(method: string, path: string, declared: Declared, who: Who): Outcome {
  if (declared.kind === 'public') return 'pass';
  if (who === 'none') return { status: 401, reason: 'missing_token' };
  if (who === 'expired') return { status: 401, reason: 'token_expired' };
  if (who === 'revoked' || who === 'parentRevoked') return { status: 401, reason: 'token_revoked' };
  if (who === 'admin') return 'pass';
  const bound = who === 'boundElsewhere';
  const permissions = bound ? [`context[${BOUND_CTX}]`, ...CLIENT_PERMISSIONS] : CLIENT_PERMISSIONS;
  const denied: Outcome = { status: 403, reason: 'permission_denied' };
  if (path.startsWith('/admin/')) {
    // key administration: a bound key may only revoke itself (decisions: "Client-key binding")
    const selfRevoke = method === 'POST' && path === '/admin/revoke';
    if (selfRevoke) return 'pass';
    if (bound) return denied;
    return declared.permission && !satisfies(permissions, declared.permission) ? denied : 'pass';
  }
  if (declared.permission && !satisfies(permissions, declared.permission)) return denied;
  if (bound) {
    const d = classifyRoute(method, path);
    if (d.kind === 'guarded' && d.bindingChecked === 'route' && !mayActOn(bindingOf(permissions), d.target)) return denied;
  }
  return 'pass';
}

const GUARD_REASONS = new Set(['missing_token', 'invalid_token', 'token_expired', 'token_revoked', 'permission_denied', 'invalid_node']);

let node: TestNode;
const tokens = {} as Record<Who, string | undefined>;
let routes: RouteRecord[];

const subOf = (jwt: string): string => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).sub;

beforeAll(async () => {
  const clock = new FakeClock(Date.now());
  node = await startTestNode({ clock });
  routes = [...node.node.routes];
  const admin = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
  const mint = async (c: Client, req: Parameters<Client['auth']['createClientKey']>[0]) => (await c.auth.createClientKey(req)).data.access_token;
  tokens.expired = await mint(admin, { permissions: ['context:list'] });
  clock.advance(15 * 60 + 61); // the client access token lifetime and its leeway
  tokens.admin = (await admin.auth.login({ username: node.adminUser, password: node.adminPassword })).accessToken;
  tokens.client = await mint(admin, { permissions: CLIENT_PERMISSIONS });
  tokens.boundElsewhere = await mint(admin, { context_id: BOUND_CTX, permissions: CLIENT_PERMISSIONS });
  tokens.revoked = await mint(admin, { permissions: ['admin'] });
  await admin.auth.revoke(subOf(tokens.revoked));
  await admin.auth.createRootKey({ public_key: 'ops', auth_method: 'user_password', provider_data: { username: 'ops', password: 'ops-password' } });
  const ops = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  const opsToken = (await ops.auth.login({ username: 'ops', password: 'ops-password' })).accessToken;
  tokens.parentRevoked = await mint(ops, { permissions: ['admin'] });
  await admin.auth.deleteRootKey(subOf(opsToken));
  tokens.none = undefined;
}, 60_000);
afterAll(async () => node?.destroy());

/** One request; only the status and X-Auth-Error are read (a stream's body is cancelled). */
async function answer(method: string, path: string, token: string | undefined): Promise<{ status: number; reason: string | null }> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  let body: string | undefined;
  if (method === 'POST' || method === 'PUT') {
    headers['content-type'] = path === '/admin-api/blobs' ? 'application/octet-stream' : 'application/json';
    body = path === '/admin-api/blobs' ? '' : '{}';
  }
  const res = await fetch(node.url + path, { method, headers, body, signal: AbortSignal.timeout(20_000) });
  await res.body?.cancel();
  return { status: res.status, reason: res.headers.get('x-auth-error') };
}

describe('the route table', () => {
  it('declares every registered route (public, or guarded with a permission)', () => {
    expect(routes.length).toBeGreaterThan(100);
    const undeclared = routes.filter((r) => declaredAccess(r.method, concrete(r.url)) === undefined).map((r) => `${r.method} ${r.url}`);
    expect(undeclared).toEqual([]);
  });

  it('guards every route under /admin-api, /admin, /jsonrpc, /ws and /sse except the public probes', () => {
    const open = routes
      .filter((r) => /^\/(admin-api|admin|jsonrpc|ws|sse)(\/|$)/.test(r.url))
      .filter((r) => declaredAccess(r.method, concrete(r.url))?.kind === 'public')
      .map((r) => r.url);
    // TEE information and attestation are public as the reference routes them (admin-wire-b §9.1)
    expect(open.sort()).toEqual(['/admin-api/health', '/admin-api/is-authed', '/admin-api/openapi.json', '/admin-api/ready', '/admin-api/tee/attest', '/admin-api/tee/info']);
  });
});

describe.each(WHO)('every route with %s', (who) => {
  it('answers what the declaration and the spec give', async () => {
    const wrong: string[] = [];
    for (const r of routes) {
      const path = concrete(r.url);
      const declared = declaredAccess(r.method, path);
      if (!declared) continue; // reported by the route-table test
      const want = expected(r.method, path, declared, who);
      const got = await answer(r.method, path, tokens[who]);
      const refused = (got.status === 401 || got.status === 403) && got.reason !== null && GUARD_REASONS.has(got.reason);
      const cell = `${r.method} ${r.url}: expected ${want === 'pass' ? 'to pass the guard' : `${want.status} ${want.reason}`}, got ${got.status} ${got.reason ?? ''}`;
      if (want === 'pass') {
        if (refused || (got.status >= 500 && got.status !== 501 && got.status !== 503)) wrong.push(cell);
      } else if (got.status !== want.status || got.reason !== want.reason) {
        wrong.push(cell);
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});
