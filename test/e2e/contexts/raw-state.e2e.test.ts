/**
 * hearth's raw state rows end to end (issue #25 §4; docs/contexts.md "Raw state rows"): a real node
 * running the kv_flat test application (its ABI names no listing method, so the dashboard and the
 * CLI browse its raw rows), driven through the SDK over HTTP. Writes a few hundred keys, pages
 * through every row, reads values back, keeps two contexts apart, and checks 400/401/403/404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, HttpError, MemoryTokenStore, tokensFromPair, type Client, type RawStateEntry } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const hexOf = (s: string) => Buffer.from(s, 'utf8').toString('hex');
const ITEMS = 321;

let node: TestNode;
let c: Client;
let ctxA: string;
let ctxB: string;

async function httpError(p: Promise<unknown>): Promise<HttpError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof HttpError)) throw new Error(`expected an HttpError, got ${String(e)}`);
  return e;
}

async function allRows(contextId: string, limit?: number): Promise<{ rows: RawStateEntry[]; pages: number }> {
  const rows: RawStateEntry[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    const page = await c.contexts.rawState(contextId, { after, limit });
    pages++;
    rows.push(...page.entries);
    after = page.next ?? undefined;
  } while (after !== undefined);
  return { rows, pages };
}

beforeAll(async () => {
  node = await startTestNode();
  c = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });
  const bundle = await makeBundle({ wasm: await buildTestApp('kv_flat'), package: 'com.hearth.kv-flat.raw-state' });
  const appId = (await c.applications.installDev(bundle.path)).applicationId;
  const ns = (await c.namespaces.create({ applicationId: appId, name: 'raw' })).namespaceId;
  ctxA = (await c.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
  ctxB = (await c.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
  await c.rpc.execute(ctxA, 'fill', { prefix: 'k', from: 0, count: ITEMS });
  await c.rpc.execute(ctxA, 'set', { key: 'greeting', value: 'héllo wörld' });
  await c.rpc.execute(ctxB, 'set', { key: 'only-in-b', value: 'b' });
}, 180_000);
afterAll(async () => node?.destroy());

describe('raw state rows through the SDK', () => {
  it('pages through every row of the context, in key order, each once', async () => {
    const { rows, pages } = await allRows(ctxA, 50);
    // ITEMS items, greeting, the count and the root the app keeps
    expect(rows).toHaveLength(ITEMS + 3);
    expect(pages).toBe(Math.ceil((ITEMS + 3) / 50));
    const keys = rows.map((r) => r.key);
    expect(keys).toEqual([...keys].sort((x, y) => Buffer.compare(Buffer.from(x, 'hex'), Buffer.from(y, 'hex'))));
    expect(new Set(keys).size).toBe(keys.length);
    for (let i = 0; i < ITEMS; i++) expect(keys).toContain(hexOf(`flat:item:k${i}`));
    // the default page is 100 rows
    expect((await c.contexts.rawState(ctxA)).entries).toHaveLength(100);
    const whole = await c.contexts.rawState(ctxA, { limit: 500 });
    expect(whole.entries).toHaveLength(ITEMS + 3);
    expect(whole.next).toBeNull();
  });

  it('previews text as UTF-8 and binary values as hex, with their sizes', async () => {
    const { rows } = await allRows(ctxA, 500);
    const greeting = rows.find((r) => r.key === hexOf('flat:item:greeting'))!;
    expect(greeting).toEqual({ key: hexOf('flat:item:greeting'), size: Buffer.byteLength('héllo wörld'), preview: 'héllo wörld', previewEncoding: 'utf8' });
    expect(rows.find((r) => r.key === hexOf('flat:count'))).toMatchObject({ preview: String(ITEMS + 1), previewEncoding: 'utf8' });
    const root = rows.find((r) => r.key === hexOf('flat:root'))!;
    expect(root.size).toBe(32);
    expect(root.previewEncoding).toBe('hex');
    expect(root.preview).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers each value in full, matching what the application reads', async () => {
    for (const i of [0, 7, ITEMS - 1]) {
      const v = await c.contexts.rawStateValue(ctxA, hexOf(`flat:item:k${i}`));
      expect(v).toEqual({ key: hexOf(`flat:item:k${i}`), size: `v${i}`.length, encoding: 'base64', value: Buffer.from(`v${i}`).toString('base64'), truncated: false });
      expect(await c.rpc.execute<string>(ctxA, 'get', { key: `k${i}` })).toBe(`v${i}`);
    }
    const root = await c.contexts.rawStateValue(ctxA, hexOf('flat:root'));
    expect(Buffer.from(root.value, 'base64')).toHaveLength(32);
  });

  it('keeps contexts apart', async () => {
    const { rows } = await allRows(ctxB);
    expect(rows.map((r) => r.key).sort()).toEqual([hexOf('flat:count'), hexOf('flat:item:only-in-b'), hexOf('flat:root')].sort());
    expect((await httpError(c.contexts.rawStateValue(ctxB, hexOf('flat:item:k0')))).status).toBe(404);
    expect((await httpError(c.contexts.rawStateValue(ctxA, hexOf('flat:item:only-in-b')))).status).toBe(404);
  });

  it('answers 400 naming a malformed parameter, 404 for an unknown context', async () => {
    for (const [p, name] of [
      [c.contexts.rawState(ctxA, { after: 'xyz' }), 'after'],
      [c.contexts.rawState(ctxA, { after: 'abc' }), 'after'],
      [c.contexts.rawState(ctxA, { limit: 0 }), 'limit'],
      [c.contexts.rawState(ctxA, { limit: 501 }), 'limit'],
      [c.contexts.rawStateValue(ctxA, 'not hex'), 'key'],
    ] as const) {
      const e = await httpError(p);
      expect(e.status).toBe(400);
      expect(e.message).toContain(name);
    }
    expect((await httpError(c.contexts.rawState('9'.repeat(64)))).status).toBe(404);
    expect((await httpError(c.contexts.rawState('nope'))).status).toBe(400);
  });

  it('is admin only: 401 without a token, 403 for a key that may list contexts', async () => {
    const anonymous = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    expect((await httpError(anonymous.contexts.rawState(ctxA))).status).toBe(401);
    expect((await httpError(anonymous.contexts.rawStateValue(ctxA, '00'))).status).toBe(401);
    const pair = (await c.auth.createClientKey({ permissions: ['context:list'] })).data;
    const reader = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await reader.http.setTokens(tokensFromPair(pair));
    expect((await reader.contexts.get(ctxA)).id).toBe(ctxA);
    for (const p of [reader.contexts.rawState(ctxA), reader.contexts.rawStateValue(ctxA, hexOf('flat:root'))]) {
      const e = await httpError(p);
      expect(e.status).toBe(403);
      expect(e.authError).toBe('permission_denied');
    }
  });
});
