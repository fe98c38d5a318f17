/**
 * Aliases end to end (admin spec "Aliases"; admin-wire-a §6.1): a real node on 127.0.0.1, driven
 * through the project's SDK over HTTP, with raw `fetch` where the exact wire bytes matter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, tokensFromPair, type AliasScope, type Client } from '../../../src/client/index.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { httpError } from '../../helpers/status.ts';

const CTX = '1a'.repeat(32);
const APP = '2b'.repeat(32);
const DEV = '3c'.repeat(32);
const SCOPES: [AliasScope, string][] = [
  ['context', CTX],
  ['application', APP],
  ['device', DEV],
];

let node: TestNode;
let admin: Client;
let token: string;

const clientFor = (): Client => createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });

/** A raw request with the admin token, for wire-level assertions. */
async function raw(method: string, path: string, init: { body?: string; contentType?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (init.contentType) headers['content-type'] = init.contentType;
  const res = await fetch(`${node.url}${path}`, { method, headers, body: init.body });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  node = await startTestNode();
  admin = clientFor();
  token = (await admin.auth.login({ username: node.adminUser, password: node.adminPassword })).accessToken;
});
afterAll(async () => node?.destroy());

describe('alias routes, per scope', () => {
  it.each(SCOPES)('%s: create, lookup, list, delete, lookup after delete', async (scope, id) => {
    const name = `main-${scope}`;
    await admin.aliases.create(scope, name, id);
    expect(await admin.aliases.lookup(scope, name)).toBe(id);
    const list = await admin.aliases.list(scope);
    expect(list[name]).toBe(id);
    await admin.aliases.delete(scope, name);
    // lookup after delete: 2xx with a falsy value, not 404 (admin-wire-a §0.1 item 9)
    expect(await admin.aliases.lookup(scope, name)).toBeNull();
    expect(await admin.aliases.list(scope)).toEqual({});
  });

  it('answers the reference wire shapes exactly', async () => {
    const created = await raw('POST', '/admin-api/alias/create/context', {
      contentType: 'application/json',
      body: JSON.stringify({ alias: 'wire', contextId: CTX }),
    });
    expect(created).toMatchObject({ status: 200, json: { data: null } });
    expect((await raw('POST', '/admin-api/alias/lookup/context/wire', { contentType: 'application/json', body: '{}' })).json).toEqual({
      data: { value: CTX },
    });
    expect((await raw('GET', '/admin-api/alias/list/context')).json).toEqual({ data: { wire: CTX } });
    expect((await raw('POST', '/admin-api/alias/delete/context/wire', { contentType: 'application/json', body: '{}' })).json).toEqual({ data: null });
    const after = await raw('POST', '/admin-api/alias/lookup/context/wire', { contentType: 'application/json', body: '{}' });
    expect(after).toMatchObject({ status: 200, json: { data: { value: null } } });
  });

  it('lists an empty scope as {"data":{}}', async () => {
    for (const [scope] of SCOPES) {
      const res = await raw('GET', `/admin-api/alias/list/${scope}`);
      expect(res.status).toBe(200);
      expect(res.text).toBe('{"data":{}}');
    }
  });

  it('lists as a flat map ordered by alias, scopes kept apart', async () => {
    await admin.aliases.create('application', 'zeta', APP);
    await admin.aliases.create('application', 'alpha', CTX);
    await admin.aliases.create('context', 'alpha', CTX);
    const list = await admin.aliases.list('application');
    expect(list).toEqual({ alpha: CTX, zeta: APP });
    expect(Object.keys(list)).toEqual(['alpha', 'zeta']);
    expect(await admin.aliases.list('context')).toEqual({ alpha: CTX });
    for (const [scope, name] of [['application', 'zeta'], ['application', 'alpha'], ['context', 'alpha']] as const) {
      await admin.aliases.delete(scope, name);
    }
  });

  it('accepts lookup and delete with no body, an empty JSON body or any content type', async () => {
    await admin.aliases.create('device', 'bodies', DEV);
    expect((await raw('POST', '/admin-api/alias/lookup/device/bodies')).json).toEqual({ data: { value: DEV } });
    expect((await raw('POST', '/admin-api/alias/lookup/device/bodies', { contentType: 'application/json', body: '' })).status).toBe(200);
    expect((await raw('POST', '/admin-api/alias/lookup/device/bodies', { contentType: 'text/plain', body: 'x' })).status).toBe(200);
    expect((await raw('POST', '/admin-api/alias/delete/device/bodies', { contentType: 'application/json', body: '' })).json).toEqual({ data: null });
  });

  it('deletes idempotently', async () => {
    await admin.aliases.delete('context', 'never-created');
    expect(await admin.aliases.lookup('context', 'never-created')).toBeNull();
  });

  it('stores base58 and upper-case hex ids as lowercase hex', async () => {
    await admin.aliases.create('context', 'legacy', '11111111111111111111111111111111');
    await admin.aliases.create('application', 'upper', APP.toUpperCase());
    expect(await admin.aliases.lookup('context', 'legacy')).toBe('00'.repeat(32));
    expect(await admin.aliases.lookup('application', 'upper')).toBe(APP);
    await admin.aliases.delete('context', 'legacy');
    await admin.aliases.delete('application', 'upper');
  });
});

describe('alias errors', () => {
  it('answers 409 "alias already exists" for a duplicate create', async () => {
    await admin.aliases.create('context', 'dup', CTX);
    const e = await httpError(admin.aliases.create('context', 'dup', APP));
    expect(e.status).toBe(409);
    expect(e.body).toEqual({ error: 'alias already exists' });
    expect(await admin.aliases.lookup('context', 'dup')).toBe(CTX);
    await admin.aliases.delete('context', 'dup');
  });

  it('answers 404 for every /alias/*/identity/... route and unknown scopes', async () => {
    const paths: [string, string][] = [
      ['POST', '/admin-api/alias/create/identity'],
      ['POST', `/admin-api/alias/create/identity/${CTX}`],
      ['POST', '/admin-api/alias/lookup/identity/name'],
      ['POST', `/admin-api/alias/lookup/identity/${CTX}/name`],
      ['POST', '/admin-api/alias/delete/identity/name'],
      ['POST', `/admin-api/alias/delete/identity/${CTX}/name`],
      ['GET', '/admin-api/alias/list/identity'],
      ['GET', `/admin-api/alias/list/identity/${CTX}`],
      ['POST', '/admin-api/alias/create/blob'],
      ['GET', '/admin-api/alias/list/blob'],
    ];
    for (const [method, path] of paths) {
      const res = await raw(method, path, method === 'POST' ? { contentType: 'application/json', body: JSON.stringify({ alias: 'a', contextId: CTX }) } : {});
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(typeof res.json.error).toBe('string');
    }
    const e = await httpError(admin.aliases.lookup('identity' as AliasScope, 'a'));
    expect(e.status).toBe(404);
    expect(e.errorText).toMatch(/Unknown alias scope 'identity'/);
  });

  it('answers 400 for invalid alias names, in the body and in the path', async () => {
    const long = 'x'.repeat(51);
    for (const bad of [long, 'has space', 'slash/inside', 'ünï', '']) {
      const e = await httpError(admin.aliases.create('context', bad, CTX));
      expect(e.status, JSON.stringify(bad)).toBe(400);
      expect(e.errorText).toMatch(/^Invalid alias/);
    }
    expect((await httpError(admin.aliases.lookup('context', long))).status).toBe(400);
    expect((await httpError(admin.aliases.lookup('context', 'has space'))).status).toBe(400);
    expect((await httpError(admin.aliases.delete('application', 'a:b'))).status).toBe(400);
    // 50 characters is the limit, not beyond it
    await admin.aliases.create('context', 'x'.repeat(50), CTX);
    await admin.aliases.delete('context', 'x'.repeat(50));
  });

  it('answers 400 naming the field for a missing or invalid id', async () => {
    const missing = await raw('POST', '/admin-api/alias/create/application', {
      contentType: 'application/json',
      body: JSON.stringify({ alias: 'a', contextId: CTX }),
    });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toContain('body.applicationId is required');
    const bad = await httpError(admin.aliases.create('device', 'd', 'not-an-id'));
    expect(bad.status).toBe(400);
    expect(bad.errorText).toMatch(/^Invalid deviceId/);
    const badJson = await raw('POST', '/admin-api/alias/create/context', { contentType: 'application/json', body: '{"alias":' });
    expect(badJson.status).toBe(400);
  });

  it('answers 400 for a create body of the wrong shape, and 404 for an unknown scope whatever the body', async () => {
    const create = (body: string | undefined, scope = 'device') =>
      raw('POST', `/admin-api/alias/create/${scope}`, body === undefined ? {} : { contentType: 'application/json', body });
    expect(await create(undefined)).toMatchObject({ status: 400, json: { error: 'Invalid request: body must be object' } });
    expect(await create('[1]')).toMatchObject({ status: 400, json: { error: 'Invalid request: body must be object' } });
    expect(await create('{}')).toMatchObject({ status: 400, json: { error: 'Invalid request: body.alias is required' } });
    expect(await create(JSON.stringify({ alias: 7, deviceId: DEV }))).toMatchObject({
      status: 400,
      json: { error: 'Invalid request: body.alias must be string' },
    });
    expect(await create(JSON.stringify({ alias: 'd', deviceId: null }))).toMatchObject({
      status: 400,
      json: { error: 'Invalid request: body.deviceId must be string' },
    });
    const unknown = await create('{}', 'identity');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatch(/^Unknown alias scope 'identity'/);
  });
});

describe('alias permissions', () => {
  it('refuses a client key without the alias permission with 403', async () => {
    const pair = (await admin.auth.createClientKey({ permissions: ['context:list'] })).data;
    const c = clientFor();
    await c.http.setTokens(tokensFromPair(pair));
    // thunks, so each call starts only when its rejection is awaited
    for (const call of [
      () => c.aliases.create('context', 'nope', CTX),
      () => c.aliases.lookup('context', 'nope'),
      () => c.aliases.delete('application', 'nope'),
      () => c.aliases.list('context'),
      () => c.aliases.list('device'),
    ]) {
      const e = await httpError(call());
      expect(e.status).toBe(403);
      expect(e.authError).toBe('permission_denied');
    }
  });

  it('lets a client key with exactly one alias permission do exactly that', async () => {
    await admin.aliases.create('context', 'visible', CTX);
    const pair = (await admin.auth.createClientKey({ permissions: ['context:alias:list:context', 'context:alias:lookup:context'] })).data;
    const c = clientFor();
    await c.http.setTokens(tokensFromPair(pair));
    expect((await c.aliases.list('context')).visible).toBe(CTX);
    expect(await c.aliases.lookup('context', 'visible')).toBe(CTX);
    expect((await httpError(c.aliases.create('context', 'other', CTX))).status).toBe(403);
    expect((await httpError(c.aliases.list('application'))).status).toBe(403);
    await admin.aliases.delete('context', 'visible');
  });
});

describe('alias persistence', () => {
  it('keeps aliases across a restart', async () => {
    for (const [scope, id] of SCOPES) await admin.aliases.create(scope, 'durable', id);
    await admin.aliases.create('context', 'gone', CTX);
    await admin.aliases.delete('context', 'gone');
    node = await node.restart();
    admin = clientFor();
    token = (await admin.auth.login({ username: node.adminUser, password: node.adminPassword })).accessToken;
    for (const [scope, id] of SCOPES) {
      expect(await admin.aliases.lookup(scope, 'durable')).toBe(id);
      expect(await admin.aliases.list(scope)).toEqual({ durable: id });
    }
    expect(await admin.aliases.lookup('context', 'gone')).toBeNull();
  });
});
