/**
 * No spec-shaped answer carries a key the spec does not declare (issue 21 §2). Strict clients (the
 * official TypeScript client's wire-contract test) refuse such keys, so hearth's additions live on
 * hearth's own routes. Three checks:
 *
 * 1. every 200 JSON answer in the OpenAPI document is either spec-shaped (a shape in
 *    test/fixtures/spec-fields.ts, and its schema declares no other key), a hearth-only route on
 *    the allow-list (whose document names it), or a spec route the spec leaves unshaped (listed,
 *    with why);
 * 2. spec-shaped schemas are closed (`additionalProperties: false`), so the conformance tests, which
 *    check every live answer against the document, refuse a key the serializer might add;
 * 3. live answers of the main routes, from a node holding a context, carry only declared keys.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, HttpError, MemoryTokenStore, tokensFromPair, type Client } from '../../../src/client/index.ts';
import { ALLOWED_EXTENSIONS, SPEC_SHAPES, UNSHAPED } from '../../fixtures/spec-fields.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { ROOT, startTestNode, type TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';
import { openObjects, undeclaredInSchema, undeclaredInValue } from '../../helpers/wire-shapes.ts';

type Json = Record<string, any>;

const WHOLE_ROUTES = new Set(ALLOWED_EXTENSIONS.filter((e) => !e.key).map((e) => e.route));
const allowedKeys = (route: string) => new Set(ALLOWED_EXTENSIONS.filter((e) => e.route === route && e.key).map((e) => e.key!));

/** Every documented 2xx answer with a JSON schema: `METHOD /path` → schema. */
function jsonAnswers(doc: Json): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, response] of Object.entries((op.responses ?? {}) as Json)) {
        const schema = (response as Json).content?.['application/json']?.schema;
        if (status.startsWith('2') && schema) out.set(`${method.toUpperCase()} ${path}`, schema);
      }
    }
  }
  return out;
}

let node: TestNode;
let doc: Json;
let answers: Map<string, Json>;

beforeAll(async () => {
  node = await startTestNode();
  doc = (await createClient({ baseUrl: node.url }).admin.openApi()) as Json;
  answers = jsonAnswers(doc);
});
afterAll(() => node?.destroy());

describe('the OpenAPI document against the spec’s field lists', () => {
  it('classifies every JSON answer: spec-shaped, hearth-only (allowed), or unshaped by the spec', () => {
    expect(answers.size).toBeGreaterThan(100);
    const unclassified = [...answers.keys()].filter((r) => !SPEC_SHAPES[r] && !WHOLE_ROUTES.has(r) && !UNSHAPED[r]);
    expect(unclassified, 'JSON answers with no spec shape, no allow-list entry and no reason').toEqual([]);
    // the fixture names no route that does not exist (a typo would silently check nothing)
    const stale = [...Object.keys(SPEC_SHAPES), ...Object.keys(UNSHAPED), ...ALLOWED_EXTENSIONS.map((e) => e.route)].filter((r) => !answers.has(r));
    expect(stale, 'fixture entries that match no documented JSON answer').toEqual([]);
    // a route is one thing only
    const both = Object.keys(SPEC_SHAPES).filter((r) => WHOLE_ROUTES.has(r) || UNSHAPED[r]);
    expect(both).toEqual([]);
  });

  it('declares no key in a spec-shaped 200 schema that the spec does not list', () => {
    const undeclared: string[] = [];
    for (const [route, shape] of Object.entries(SPEC_SHAPES)) {
      const schema = answers.get(route);
      if (schema) undeclared.push(...undeclaredInSchema(schema, shape, allowedKeys(route)).map((k) => `${route}: ${k}`));
    }
    expect(undeclared).toEqual([]);
  });

  it('publishes spec-shaped schemas closed, so a live answer with an extra key breaks the conformance tests', () => {
    const open: string[] = [];
    for (const [route, shape] of Object.entries(SPEC_SHAPES)) {
      const schema = answers.get(route);
      if (schema) open.push(...openObjects(schema, shape).map((at) => `${route}: ${at}`));
    }
    expect(open).toEqual([]);
  });

  it('documents each allowed extension where the allow-list says', async () => {
    const undocumented: string[] = [];
    for (const e of ALLOWED_EXTENSIONS) {
      const text = await readFile(join(ROOT, e.doc), 'utf8');
      const path = e.route.split(' ')[1].replace(/^\/admin-api/, '');
      const named = text.includes(path) && (!e.key || text.includes(`\`${e.key.split('.').pop()}\``)) && (!e.optIn || text.includes(e.optIn));
      if (!named) undocumented.push(`${e.route}${e.key ? ` ${e.key}` : ''} in ${e.doc}`);
    }
    expect(undocumented).toEqual([]);
  });

  it('catches an undeclared key: the check is not vacuous', () => {
    const schema = { type: 'object', properties: { data: { type: 'object', properties: { contexts: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, sync: { type: 'object' } } } } } } } };
    expect(undeclaredInSchema(schema, SPEC_SHAPES['GET /admin-api/contexts'])).toEqual(['data.contexts[].sync']);
    expect(undeclaredInValue({ data: { contexts: [{ id: 'x', sync: {} }] } }, SPEC_SHAPES['GET /admin-api/contexts'])).toEqual(['data.contexts[].sync']);
    expect(undeclaredInValue({ data: { namespaceId: 'n', groupId: 'n' } }, SPEC_SHAPES['POST /admin-api/namespaces/{namespaceId}/join'])).toEqual(['data.groupId']);
  });
});

describe('live answers of the main routes carry only declared keys', () => {
  let c: Client;
  let ctx: string;
  let ns: string;
  let appId: string;

  beforeAll(async () => {
    c = createClient({ baseUrl: node.url });
    await c.auth.login({ username: node.adminUser, password: node.adminPassword });
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.wire-shapes' });
    appId = (await c.applications.installDev(bundle.path)).applicationId;
    ns = (await c.namespaces.create({ applicationId: appId, name: 'shapes' })).namespaceId;
    // a named context: `name` is the reference's, emitted only when set
    ctx = (await c.contexts.create({ groupId: ns, initializationParams: [], name: 'wire' })).contextId;
    await c.rpc.execute(ctx, 'set', { key: 'k', value: 'v' });
  }, 120_000);

  it('contexts, namespaces, groups, applications, identity, blobs, aliases', async () => {
    const get = (path: string) => c.http.json<unknown>(path);
    const reads: [string, string][] = [
      ['GET /admin-api/contexts', '/admin-api/contexts'],
      ['GET /admin-api/contexts/{contextId}', `/admin-api/contexts/${ctx}`],
      ['GET /admin-api/contexts/for-application/{applicationId}', `/admin-api/contexts/for-application/${appId}`],
      ['GET /admin-api/contexts/{contextId}/identities', `/admin-api/contexts/${ctx}/identities`],
      ['GET /admin-api/contexts/{contextId}/intents', `/admin-api/contexts/${ctx}/intents`],
      ['GET /admin-api/namespaces', '/admin-api/namespaces'],
      ['GET /admin-api/namespaces/{namespaceId}', `/admin-api/namespaces/${ns}`],
      ['GET /admin-api/groups/{groupId}', `/admin-api/groups/${ns}`],
      ['GET /admin-api/groups/{groupId}/members', `/admin-api/groups/${ns}/members`],
      ['GET /admin-api/groups/{groupId}/contexts', `/admin-api/groups/${ns}/contexts`],
      ['GET /admin-api/applications', '/admin-api/applications'],
      ['GET /admin-api/applications/{id}', `/admin-api/applications/${appId}`],
      ['GET /admin-api/identity', '/admin-api/identity'],
      ['GET /admin-api/blobs', '/admin-api/blobs'],
      ['GET /admin-api/health', '/admin-api/health'],
      ['GET /admin/keys/clients', '/admin/keys/clients'],
    ];
    const undeclared: string[] = [];
    for (const [route, path] of reads) {
      undeclared.push(...undeclaredInValue(await get(path), SPEC_SHAPES[route]).map((k) => `${route}: ${k}`));
    }
    expect(undeclared).toEqual([]);
    // the listing really holds the context, with its name and group (so the walk above saw them)
    expect(await c.contexts.list()).toEqual([expect.objectContaining({ id: ctx, name: 'wire', groupId: ns })]);
  });

  it('an opt-in extension appears only when asked for', async () => {
    await c.auth.createClientKey({ permissions: ['context:list'] });
    for (const e of ALLOWED_EXTENSIONS.filter((x) => x.optIn)) {
      const path = e.route.split(' ')[1];
      const plain = await c.http.json<unknown>(path);
      expect(undeclaredInValue(plain, SPEC_SHAPES[e.route]), `${e.route} without ?${e.optIn}`).toEqual([]);
      const asked = await c.http.json<unknown>(`${path}?${e.optIn}`);
      expect(undeclaredInValue(asked, SPEC_SHAPES[e.route]), `${e.route}?${e.optIn}`).toContain(e.key);
    }
  });

  it("the sync status lives on hearth's own routes", async () => {
    expect(await c.contexts.get(ctx)).not.toHaveProperty('sync');
    expect(await c.contexts.syncStatus(ctx)).toMatchObject({ contextId: ctx, caughtUp: true });
    expect((await c.contexts.syncStatuses()).map((s) => s.contextId)).toEqual([ctx]);
  });

  it('the sync-status routes need what reading the context needs; a key bound elsewhere is refused', async () => {
    const other = (await c.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
    const me = (await c.accounts.identity()).publicKey;
    const keyed = async (permissions: string[]) => {
      const pair = (await c.auth.createClientKey({ context_id: ctx, context_identity: me, permissions })).data;
      const k = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
      await k.http.setTokens(tokensFromPair(pair));
      return k;
    };
    const refusal = (p: Promise<unknown>) => p.then(() => 200, (e: unknown) => (e instanceof HttpError ? `${e.status} ${e.authError}` : String(e)));
    const reader = await keyed(['context:list']);
    expect((await reader.contexts.syncStatus(ctx)).contextId).toBe(ctx);
    expect(await refusal(reader.contexts.syncStatus(other))).toBe('403 permission_denied');
    expect(await refusal(reader.contexts.syncStatuses())).toBe('403 permission_denied'); // names no context: not for a bound key
    const executor = await keyed(['context:execute']);
    expect(await refusal(executor.contexts.syncStatus(ctx))).toBe('403 permission_denied'); // executing is not reading
    expect(await refusal(c.contexts.syncStatus('e'.repeat(64)))).toBe('404 null');
    expect(await refusal(c.contexts.syncStatus('x'))).toBe('400 null');
  });
});
