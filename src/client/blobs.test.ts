import { describe, expect, it } from 'vitest';
import { fakeFetch } from './fake-fetch.ts';
import { createClient, HttpError } from './index.ts';

const ID = 'ab'.repeat(32);
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('client.blobs', () => {
  it('upload sends raw bytes with hash and context_id and returns {blob_id, size}', async () => {
    const f = fakeFetch({ 'PUT /admin-api/blobs': () => json({ data: { blob_id: ID, size: 3 } }) });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    const progress: [number, number | undefined][] = [];
    const r = await c.blobs.upload(new Uint8Array([1, 2, 3]), { hash: 'cd'.repeat(32), contextId: 'ef'.repeat(32), onProgress: (l, t) => progress.push([l, t]) });
    expect(r).toEqual({ blob_id: ID, size: 3 });
    const req = f.calls('PUT /admin-api/blobs')[0]!;
    expect(new URL(req.url).searchParams.get('hash')).toBe('cd'.repeat(32));
    expect(new URL(req.url).searchParams.get('context_id')).toBe('ef'.repeat(32));
    expect(req.headers.get('content-type')).toBe('application/octet-stream');
    expect(progress).toEqual([[0, 3], [3, 3]]);
  });

  it('head reads Blob information from the headers', async () => {
    const f = fakeFetch({
      [`HEAD /admin-api/blobs/${ID}`]: () =>
        new Response(null, {
          status: 200,
          headers: { 'content-length': '10', 'x-blob-id': ID, 'x-blob-hash': 'cd'.repeat(32), 'x-blob-mime-type': 'image/png', 'x-blob-source': 'peer' },
        }),
    });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    expect(await c.blobs.head(ID)).toEqual({ blobId: ID, size: 10, hash: 'cd'.repeat(32), mimeType: 'image/png', source: 'peer' });
  });

  it('head of a missing blob throws HttpError 404', async () => {
    const c = createClient({ baseUrl: 'http://node', fetch: fakeFetch().fetch });
    const err = await c.blobs.head(ID).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(404);
  });

  it('download streams with progress; list and delete read the wire shapes', async () => {
    const f = fakeFetch({
      [`GET /admin-api/blobs/${ID}`]: () => new Response(new Uint8Array([9, 8, 7]), { headers: { 'content-length': '3' } }),
      'GET /admin-api/blobs': () => json({ data: { blobs: [{ blob_id: ID, size: 3 }] } }),
      [`DELETE /admin-api/blobs/${ID}`]: () => json({ blob_id: ID, deleted: true }),
    });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    let seen: [number, number | undefined] = [0, undefined];
    const stream = await c.blobs.download(ID, { onProgress: (l, t) => (seen = [l, t]) });
    expect([...new Uint8Array(await new Response(stream).arrayBuffer())]).toEqual([9, 8, 7]);
    expect(seen).toEqual([3, 3]);
    expect(await c.blobs.list()).toEqual([{ blob_id: ID, size: 3 }]);
    expect(await c.blobs.delete(ID)).toEqual({ blob_id: ID, deleted: true });
  });
});
