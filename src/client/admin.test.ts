import { describe, expect, it } from 'vitest';
import { statusOf } from './admin.ts';
import { HttpError } from './errors.ts';
import { fakeFetch, json } from './fake-fetch.ts';
import { createClient } from './index.ts';

const BASE = 'http://node.test:2428';

describe('AdminApi status routes', () => {
  it('health, ready and is-authed unwrap {data:{status}}', async () => {
    const fake = fakeFetch({
      'GET /admin-api/health': () => json({ data: { status: 'alive' } }),
      'GET /admin-api/ready': () => json({ data: { status: 'ready' } }),
      'GET /admin-api/is-authed': () => json({ data: { status: 'alive' } }),
    });
    const { admin } = createClient({ baseUrl: BASE, fetch: fake.fetch });
    await expect(admin.health()).resolves.toEqual({ status: 'alive' });
    await expect(admin.ready()).resolves.toEqual({ status: 'ready' });
    await expect(admin.isAuthed()).resolves.toEqual({ status: 'alive' });
    expect(fake.requests.every((r) => !r.headers.has('authorization'))).toBe(true);
  });

  it('a 503 throws HttpError whose node status stays readable', async () => {
    const fake = fakeFetch({
      'GET /admin-api/ready': () => json({ data: { status: 'starting' } }, 503),
      'GET /admin-api/health': () => json({ data: { status: 'store_unavailable' } }, 503),
    });
    const { admin } = createClient({ baseUrl: BASE, fetch: fake.fetch });
    const ready = (await admin.ready().catch((e: unknown) => e)) as HttpError;
    expect(ready).toBeInstanceOf(HttpError);
    expect(ready.status).toBe(503);
    expect(statusOf(ready)).toBe('starting');
    expect(ready.message).toContain('status starting');
    const health = (await admin.health().catch((e: unknown) => e)) as HttpError;
    expect(statusOf(health)).toBe('store_unavailable');
    expect(statusOf({ status: 'alive' })).toBe('alive');
    expect(statusOf(new Error('x'))).toBeUndefined();
  });
});
