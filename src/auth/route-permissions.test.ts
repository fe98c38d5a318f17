import { describe, expect, it } from 'vitest';
import { isValidPermission } from './permissions.ts';
import { classifyAdminRoute, classifyRoute, declaredAccess, needsToken, type GuardDecision } from './route-permissions.ts';

const C = 'c'.repeat(64);
const G = 'a'.repeat(64);
const A = 'b'.repeat(64);

function permissionOf(method: string, path: string): string | null | undefined {
  const d = classifyRoute(method, path);
  return d.kind === 'guarded' ? d.permission : undefined;
}

describe('classifyRoute: the §5.2 table', () => {
  it.each([
    ['POST', '/jsonrpc', 'context:execute'],
    ['GET', '/ws', null],
    ['GET', '/sse', null],
    ['POST', '/sse/subscription', null],
    ['GET', '/admin-api/applications', 'application:list'],
    ['GET', `/admin-api/applications/${A}`, `application:list[${A}]`],
    ['GET', `/admin-api/applications/${A}/versions`, `application:list[${A}]`],
    ['POST', '/admin-api/install-application', 'application:install'],
    ['GET', '/admin-api/packages', 'package:list-packages'],
    ['GET', '/admin-api/packages/com.example.kv/versions', 'package:list-versions[com.example.kv]'],
    ['GET', '/admin-api/packages/com.example.kv/latest', 'package:get-latest-version[com.example.kv]'],
    ['GET', '/admin-api/contexts', 'context:list'],
    ['POST', '/admin-api/contexts', 'context:create'],
    ['GET', '/admin-api/contexts/abc', 'context:list[abc]'],
    ['DELETE', `/admin-api/contexts/${C}`, `context:delete[${C}]`],
    ['GET', `/admin-api/contexts/${C}/identities`, `context:list[${C}]`],
    ['GET', `/admin-api/contexts/${C}/identities-owned`, `context:list[${C}]`],
    ['GET', `/admin-api/contexts/${C}/storage`, `context:list[${C}]`],
    ['GET', `/admin-api/contexts/${C}/group`, `context:list[${C}]`],
    ['GET', `/admin-api/contexts/${C}/sync`, `context:list[${C}]`],
    ['GET', '/admin-api/contexts/sync', 'context:list'],
    ['GET', `/admin-api/contexts/${C}/raw-state`, 'admin'],
    ['GET', `/admin-api/contexts/${C}/raw-state/value`, 'admin'],
    ['POST', `/admin-api/contexts/${C}/join`, `context:execute[${C}]`],
    ['POST', `/admin-api/contexts/${C}/leave`, `context:execute[${C}]`],
    ['POST', `/admin-api/contexts/${C}/resync`, `context:execute[${C}]`],
    ['POST', `/admin-api/contexts/sync/${C}`, `context:execute[${C}]`],
    ['POST', '/admin-api/contexts/sync', 'context:execute'],
    ['POST', `/admin-api/contexts/${C}/application`, `context:application:update[${C}]`],
    ['GET', `/admin-api/contexts/for-application/${A}`, `context:list[${A}]`],
    ['GET', `/admin-api/contexts/with-executors/for-application/${A}`, `context:list[${A}]`],
    ['POST', '/admin-api/identity/context', 'context:execute'],
    ['GET', '/admin-api/identity', 'namespace:list'],
    ['GET', '/admin-api/namespaces', 'namespace:list'],
    ['POST', '/admin-api/namespaces', 'namespace:create'],
    ['GET', `/admin-api/namespaces/${G}`, `namespace:list[${G}]`],
    ['DELETE', `/admin-api/namespaces/${G}`, `namespace:manage[${G}]`],
    ['GET', `/admin-api/namespaces/for-application/${A}`, `namespace:list[${A}]`],
    ['GET', `/admin-api/namespaces/${G}/groups`, `namespace:list[${G}]`],
    ['POST', `/admin-api/namespaces/${G}/groups`, 'group:create'],
    ['POST', `/admin-api/namespaces/${G}/invite`, `namespace:manage[${G}]`],
    ['POST', `/admin-api/namespaces/${G}/join`, `namespace:manage[${G}]`],
    ['POST', `/admin-api/namespaces/${G}/leave`, `namespace:manage[${G}]`],
    ['POST', '/admin-api/groups', 'group:create'],
    ['POST', '/admin-api/groups/join', 'group:manage'],
    ['GET', '/admin-api/groups/g1', 'group:list[g1]'],
    ['GET', '/admin-api/groups/g1/members', 'group:list[g1]'],
    ['GET', `/admin-api/groups/${G}/members/${A}/capabilities`, `group:list[${G}]`],
    ['POST', `/admin-api/groups/${G}/members`, `group:manage[${G}]`],
    ['PUT', `/admin-api/groups/${G}/settings/default-capabilities`, `group:manage[${G}]`],
    ['DELETE', `/admin-api/groups/${G}`, `group:manage[${G}]`],
    ['DELETE', `/admin-api/groups/${G}/settings/tee-authoring-policy`, `group:manage[${G}]`],
    ['PUT', '/admin-api/blobs', 'blob:add:stream'],
    ['GET', '/admin-api/blobs', 'blob:list'],
    ['GET', '/admin-api/blobs/b', 'blob:get[b]'],
    ['HEAD', '/admin-api/blobs/b', 'blob:get[b]'],
    ['DELETE', '/admin-api/blobs/b', 'blob:remove[b]'],
    ['POST', '/admin-api/alias/create/context', 'context:alias:create:context'],
    ['POST', '/admin-api/alias/create/application', 'context:alias:create:application'],
    ['POST', '/admin-api/alias/lookup/context/my-alias', 'context:alias:lookup:context'],
    ['POST', '/admin-api/alias/delete/application/my-alias', 'context:alias:delete:application'],
    ['POST', `/admin-api/alias/create/identity/${C}`, 'context:alias:create:identity'],
    ['GET', '/admin-api/alias/list/context', 'context:alias:list:context'],
    ['GET', '/admin-api/alias/list/identity', 'context:alias:list:identity'],
  ])('%s %s requires %j', (method, path, permission) => {
    expect(permissionOf(method, path)).toBe(permission);
  });

  it.each([
    ['DELETE', `/admin-api/applications/${A}`],
    ['POST', '/admin-api/install-dev-application'],
    ['GET', '/admin-api/usage'],
    ['GET', '/admin-api/network/status'],
    ['GET', '/admin-api/peers'],
    ['POST', '/admin-api/tee/registration-attest'],
    ['GET', '/admin-api/account/devices'],
    ['POST', '/admin-api/alias/create/device'],
    ['GET', '/admin-api/alias/list/device'],
    ['POST', `/admin-api/contexts/${C}/query`],
    ['POST', `/admin-api/contexts/${C}/intents`],
    ['POST', `/admin-api/contexts/${C}/capabilities/grant`],
    ['POST', `/admin-api/namespaces/${G}/admit`],
    ['POST', `/admin-api/namespaces/${G}/admin`],
    ['GET', '/admin-api/groups'],
    ['PATCH', `/admin-api/groups/${G}`],
    ['POST', `/admin-api/contexts/${C}`],
    ['DELETE', '/admin-api/applications'],
    ['GET', '/admin-api/certificate'],
    ['GET', '/admin-api/totally-unknown'],
    ['GET', '/admin-api'],
    ['GET', '/admin-api/alias/list/context/extra'],
    ['POST', '/admin-api/alias/list/context'],
    ['GET', '/admin-api/alias/create/context'],
  ])('%s %s falls to admin (default deny)', (method, path) => {
    expect(permissionOf(method, path)).toBe('admin');
  });

  it('produces only valid permission strings', () => {
    for (const [m, p] of [['GET', `/admin-api/contexts/${C}`], ['GET', '/admin-api/packages/p/latest'], ['POST', '/jsonrpc']]) {
      expect(isValidPermission(permissionOf(m, p) as string)).toBe(true);
    }
  });

  it('prefers a literal segment to an id at the same position, as the router does', () => {
    expect(permissionOf('POST', '/admin-api/contexts/sync/join')).toBe('context:execute[join]');
    expect(permissionOf('GET', '/admin-api/contexts/for-application/storage')).toBe('context:list[storage]');
    expect(permissionOf('GET', '/admin-api/namespaces/for-application/groups')).toBe('namespace:list[groups]');
  });

  it('refuses ids that would break the permission brackets', () => {
    expect(permissionOf('GET', '/admin-api/contexts/a,b')).toBe('admin');
    expect(permissionOf('GET', '/admin-api/contexts/a%2Cb')).toBe('admin');
    expect(permissionOf('GET', '/admin-api/contexts/a]')).toBe('admin');
    expect(permissionOf('GET', '/admin-api/groups/%20g/members')).toBe('admin');
  });
});

describe('classifyRoute: methods and path spellings', () => {
  it('treats HEAD as GET, in any letter case', () => {
    expect(classifyRoute('HEAD', '/admin-api/contexts')).toEqual(classifyRoute('GET', '/admin-api/contexts'));
    expect(permissionOf('get', '/admin-api/contexts')).toBe('context:list');
  });

  it('answers OPTIONS as public on every guarded path', () => {
    for (const p of ['/admin-api/contexts', '/jsonrpc', '/ws', '/sse', '/sse/subscription', '/admin-api/anything']) {
      expect(classifyRoute('OPTIONS', p)).toEqual({ kind: 'public' });
    }
  });

  it('makes health, ready and is-authed public', () => {
    for (const p of ['/admin-api/health', '/admin-api/ready', '/admin-api/is-authed', '/admin-api/health/']) {
      expect(classifyRoute('GET', p)).toEqual({ kind: 'public' });
      expect(classifyRoute('HEAD', p)).toEqual({ kind: 'public' });
    }
  });

  it('keeps non-GET calls to the public probes guarded', () => {
    expect(permissionOf('POST', '/admin-api/health')).toBe('admin');
    expect(permissionOf('GET', '/admin-api/health/x')).toBe('admin');
  });

  it.each(['/auth/token', '/auth/health', '/admin/keys', '/admin', '/', '/index.html', '/assets/app.js', '/admin-apix', '/jsonrpcx', '/wss', '/sse-old', '/favicon.ico'])(
    'leaves %s unguarded',
    (path) => {
      expect(classifyRoute('GET', path)).toEqual({ kind: 'unguarded' });
    },
  );

  it('ignores one trailing slash, as the router does', () => {
    expect(permissionOf('GET', '/admin-api/contexts/')).toBe('context:list');
    expect(permissionOf('GET', `/admin-api/contexts/${C}/`)).toBe(`context:list[${C}]`);
    expect(permissionOf('POST', '/jsonrpc/')).toBe('context:execute');
  });

  it('decodes percent-encoding, so an encoded guarded path is still guarded', () => {
    expect(permissionOf('GET', '/admin%2Dapi/contexts')).toBe('context:list');
    expect(permissionOf('GET', '/%73se')).toBeNull();
    expect(classifyRoute('GET', '/%73se').kind).toBe('guarded');
    expect(permissionOf('GET', `/admin-api/contexts/%63${C.slice(1)}`)).toBe(`context:list[${C}]`);
  });

  it('ends the path at ? or #, as the router does', () => {
    expect(classifyRoute('GET', '/sse#x').kind).toBe('guarded');
    expect(permissionOf('GET', '/admin-api/contexts?x=1')).toBe('context:list');
  });

  it('fails closed on unreadable or odd paths', () => {
    expect(permissionOf('GET', '/admin-api/contexts/%E0%A4%A')).toBe('admin');
    expect(permissionOf('GET', '/admin-api//contexts')).toBe('admin');
    expect(permissionOf('GET', 'http://host/admin-api/contexts')).toBe('admin');
    expect(classifyRoute('OPTIONS', '*')).toEqual({ kind: 'public' });
  });

  it('guards /jsonrpc for every method but requires context:execute only for POST', () => {
    expect(classifyRoute('GET', '/jsonrpc')).toEqual({ kind: 'guarded', permission: null, bindingChecked: 'handler' });
    expect(permissionOf('POST', '/jsonrpc/other')).toBe('admin');
    expect(permissionOf('GET', '/ws/other')).toBe('admin');
  });

  it('accepts any valid token anywhere under /sse', () => {
    expect(permissionOf('GET', '/sse/anything/deeper')).toBeNull();
  });
});

describe('classifyRoute: targets and binding checks', () => {
  const guarded = (method: string, path: string) => classifyRoute(method, path) as Extract<GuardDecision, { kind: 'guarded' }>;

  it.each([
    ['GET', `/admin-api/contexts/${C}`, { kind: 'context', id: C }],
    ['POST', `/admin-api/contexts/${C}/join`, { kind: 'context', id: C }],
    ['POST', `/admin-api/contexts/${C}/capabilities/grant`, { kind: 'context', id: C }],
    ['POST', `/admin-api/contexts/sync/${C}`, { kind: 'context', id: C }],
    ['GET', `/admin-api/contexts/${C}/sync`, { kind: 'context', id: C }],
    ['GET', `/admin-api/contexts/for-application/${A}`, { kind: 'application', id: A }],
    ['GET', `/admin-api/contexts/with-executors/for-application/${A}`, { kind: 'application', id: A }],
    ['GET', `/admin-api/applications/${A}/versions`, { kind: 'application', id: A }],
    ['DELETE', `/admin-api/applications/${A}`, { kind: 'application', id: A }],
    ['GET', `/admin-api/namespaces/${G}`, { kind: 'namespace', id: G }],
    ['POST', `/admin-api/namespaces/${G}/groups`, { kind: 'namespace', id: G }],
    ['GET', `/admin-api/namespaces/for-application/${A}`, { kind: 'application', id: A }],
    ['GET', '/admin-api/groups/g1/members', { kind: 'group', id: 'g1' }],
    ['POST', `/admin-api/groups/${G}/contexts/${C}/remove`, { kind: 'group', id: G }],
    ['DELETE', '/admin-api/blobs/b', { kind: 'blob', id: 'b' }],
  ])('%s %s acts on %j', (method, path, target) => {
    expect(guarded(method, path).target).toEqual(target);
    expect(guarded(method, path).bindingChecked).toBe('route');
  });

  it.each([
    ['GET', '/admin-api/contexts'],
    ['POST', '/admin-api/contexts/sync'],
    ['GET', '/admin-api/contexts/sync'],
    ['POST', '/admin-api/groups/join'],
    ['POST', '/admin-api/groups'],
    ['PUT', '/admin-api/blobs'],
    ['POST', '/admin-api/identity/context'],
    ['POST', '/admin-api/alias/create/context'],
    ['GET', '/admin-api/packages/p/latest'],
    ['GET', '/admin-api/usage'],
  ])('%s %s names no target', (method, path) => {
    expect(guarded(method, path)).not.toHaveProperty('target');
  });

  it('leaves the binding check to the handler on /jsonrpc, /ws and /sse', () => {
    for (const [m, p] of [['POST', '/jsonrpc'], ['GET', '/ws'], ['GET', '/sse'], ['POST', '/sse/subscription']]) {
      expect(guarded(m, p).bindingChecked).toBe('handler');
      expect(guarded(m, p)).not.toHaveProperty('target');
    }
  });
});

describe('classifyAdminRoute (auth-wire §2, intended column)', () => {
  it.each([
    ['POST', '/admin/revoke', 'keys:delete'],
    ['GET', '/admin/keys', 'keys:list'],
    ['HEAD', '/admin/keys', 'keys:list'],
    ['POST', '/admin/keys', 'admin'],
    ['DELETE', '/admin/keys/k1', 'keys:delete'],
    ['GET', '/admin/keys/clients', 'keys:clients:list'],
    ['POST', '/admin/client-key', null],
    ['DELETE', '/admin/keys/k1/clients/c1', 'keys:clients:delete'],
    ['GET', '/admin/keys/k1/permissions', 'keys:permissions:get[k1]'],
    ['PUT', '/admin/keys/k1/permissions', 'admin'],
    ['GET', '/admin/identity', null],
    ['GET', '/admin/keys/', 'keys:list'],
    ['GET', '/admin/metrics', 'admin'],
    ['GET', '/admin/revoke', 'admin'],
    ['PUT', '/admin/keys', 'admin'],
    ['GET', '/admin/unknown', 'admin'],
    ['GET', '/admin', 'admin'],
    ['GET', '/admin/keys/a,b/permissions', 'admin'],
    ['GET', '/admin//identity', 'admin'],
    ['GET', '/elsewhere', 'admin'],
  ])('%s %s requires %j', (method, path, permission) => {
    expect(classifyAdminRoute(method, path)).toEqual({ permission });
  });

  it('lets CORS preflights through', () => {
    expect(classifyAdminRoute('OPTIONS', '/admin/keys')).toEqual({ permission: null, public: true });
  });
});

describe('declaredAccess: every route has an explicit declaration (issue #17)', () => {
  it.each([
    ['GET', '/admin-api/health', { kind: 'public' }],
    ['GET', '/auth/login', { kind: 'public' }],
    ['GET', '/metrics', { kind: 'public' }],
    ['GET', '/admin-api/contexts', { kind: 'guarded', permission: 'context:list' }],
    ['GET', '/admin-api/peers', { kind: 'guarded', permission: 'admin' }],
    ['POST', `/admin-api/contexts/${C}/query`, { kind: 'guarded', permission: 'admin' }],
    ['GET', `/admin-api/groups/${G}/upgrade/status`, { kind: 'guarded', permission: `group:list[${G}]` }],
    ['POST', '/admin-api/tee/attest', { kind: 'public' }], // public as the reference (admin-wire-b §9.1)
    ['GET', '/admin-api/tee/info', { kind: 'public' }],
    ['POST', '/admin-api/tee/registration-attest', { kind: 'guarded', permission: 'admin' }],
    ['GET', '/admin-api/network/status', { kind: 'guarded', permission: 'admin' }],
    ['GET', '/admin-api/usage', { kind: 'guarded', permission: 'admin' }],
    ['POST', `/admin-api/groups/${G}/sync`, { kind: 'guarded', permission: `group:manage[${G}]` }],
    ['POST', '/admin-api/alias/create/device', { kind: 'guarded', permission: 'admin' }],
    ['POST', '/jsonrpc', { kind: 'guarded', permission: 'context:execute' }],
    ['GET', '/sse/session/s1', { kind: 'guarded', permission: null }],
    ['POST', '/admin/keys', { kind: 'guarded', permission: 'admin' }],
    ['POST', '/admin/client-key', { kind: 'guarded', permission: null }],
  ])('%s %s is declared %j', (method, path, declared) => {
    expect(declaredAccess(method, path)).toEqual(declared);
  });

  it.each([
    ['POST', '/admin-api/brand-new-route'],
    ['GET', `/admin-api/contexts/${C}/something-new`],
    ['GET', '/auth/something-new'],
    ['GET', '/dashboard'],
    ['DELETE', '/admin/everything'],
    ['GET', '/sse/other'],
  ])('%s %s is not declared: only the default deny would decide', (method, path) => {
    expect(declaredAccess(method, path)).toBeUndefined();
  });
});

describe('needsToken: the OpenAPI `security` of a registered route', () => {
  it.each([
    ['GET', '/admin-api/health', false],
    ['GET', '/admin-api/contexts', true],
    ['GET', '/admin-api/contexts/:contextId', true],
    ['GET', '/sse', true],
    ['POST', '/jsonrpc', true],
    // outside the guard: /auth/* is open, /admin/* checks its own token
    ['POST', '/auth/token', false],
    ['GET', '/admin/keys/:key_id/clients', true],
  ] as const)('%s %s → %s', (method, url, expected) => {
    expect(needsToken(method, url)).toBe(expected);
  });

  it('follows admin.delegated_access: the delegated routes open only when it is on', () => {
    expect(needsToken('POST', '/admin-api/contexts/:contextId/intents')).toBe(true);
    expect(needsToken('POST', '/admin-api/contexts/:contextId/intents', { delegatedAccess: true })).toBe(false);
  });
});
