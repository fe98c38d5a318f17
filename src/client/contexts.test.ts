import { describe, expect, it } from 'vitest';
import { fakeFetch } from './fake-fetch.ts';
import { createClient, HttpError } from './index.ts';

const CTX = 'ab'.repeat(32);
const APP = 'cd'.repeat(32);
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('client.contexts', () => {
  it('creates with initializationParams as a byte array and unwraps the envelope', async () => {
    const f = fakeFetch({ 'POST /admin-api/contexts': () => json({ data: { contextId: CTX, memberPublicKey: APP, groupId: APP, groupCreated: false } }) });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    const r = await c.contexts.create({ groupId: APP, initializationParams: new TextEncoder().encode('{}') });
    expect(r.contextId).toBe(CTX);
    expect(f.requests[0]!.body).toEqual({ groupId: APP, initializationParams: [123, 125] });
  });

  it('reads the flat routes flat and the "none" routes as void', async () => {
    const f = fakeFetch({
      [`GET /admin-api/contexts/with-executors/for-application/${APP}`]: () => json({ contexts: [{ id: CTX, application_id: APP, contextStateHash: 'f'.repeat(64), executors: [] }] }),
      [`POST /admin-api/contexts/${CTX}/resync`]: () => json({ contextId: CTX, resyncStarted: true }),
      [`POST /admin-api/contexts/${CTX}/leave`]: () => new Response(null, { status: 200 }),
      'POST /admin-api/contexts/sync': () => new Response(null, { status: 200 }),
      [`GET /admin-api/contexts/${CTX}/group`]: () => json({ data: null }),
      [`GET /admin-api/contexts/${CTX}/storage`]: () => new Response(`{"data":{"sizeInBytes":18446744073709551615}}`, { headers: { 'content-type': 'application/json' } }),
    });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    expect(await c.contexts.withExecutors(APP)).toHaveLength(1);
    expect(await c.contexts.resync(CTX, true)).toEqual({ contextId: CTX, resyncStarted: true });
    expect(f.calls(`POST /admin-api/contexts/${CTX}/resync`)[0]!.body).toEqual({ force: true });
    await expect(c.contexts.leave(CTX)).resolves.toBeUndefined();
    await expect(c.contexts.sync()).resolves.toBeUndefined();
    expect(await c.contexts.group(CTX)).toBeNull();
    expect(await c.contexts.storage(CTX)).toBe(18446744073709551615n);
  });

  it('query answers data.output; a 409 is an HttpError', async () => {
    const f = fakeFetch({ [`POST /admin-api/contexts/${CTX}/query`]: (r) => ((r.body as { method: string }).method === 'get' ? json({ data: { output: 'v' } }) : json({ error: 'not read-only' }, 409)) });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    expect(await c.contexts.query(CTX, 'get', { key: 'k' })).toBe('v');
    const e = await c.contexts.query(CTX, 'set', {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HttpError);
    expect((e as HttpError).status).toBe(409);
  });

  it('rawState sends after and limit as the query and unwraps the page; rawStateValue sends the key', async () => {
    const page = { entries: [{ key: '00ff', size: 3, preview: 'abc', previewEncoding: 'utf8' }], next: '00ff' };
    const f = fakeFetch({
      [`GET /admin-api/contexts/${CTX}/raw-state`]: () => json({ data: page }),
      [`GET /admin-api/contexts/${CTX}/raw-state/value`]: () => json({ data: { key: '00ff', size: 3, encoding: 'base64', value: 'YWJj', truncated: false } }),
    });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    expect(await c.contexts.rawState(CTX)).toEqual(page);
    expect(await c.contexts.rawState(CTX, { after: '00ff', limit: 7 })).toEqual(page);
    const urls = f.requests.map((r) => new URL(r.url).search);
    expect(urls).toEqual(['', '?after=00ff&limit=7']);
    expect((await c.contexts.rawStateValue(CTX, '00ff')).value).toBe('YWJj');
    expect(new URL(f.requests[2]!.url).search).toBe('?key=00ff');
  });
});
