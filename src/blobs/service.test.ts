import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../store/memory.ts';
import { BlobService, type PeerBlobSource, type PeerBlobStream } from './service.ts';
import { BlobStore } from './store.ts';

const CTX = 'c0'.repeat(32);
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const idOfSmall = (b: Uint8Array) => sha(Buffer.from(sha(b), 'hex'));

async function* once(b: Uint8Array) {
  yield b;
}
async function readAll(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of it) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

let dir: string;
let kv: MemoryStore;
let store: BlobStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-blobsvc-'));
  kv = new MemoryStore();
  await kv.open();
  store = new BlobStore(kv, dir);
  await store.open();
});
afterEach(async () => {
  await kv.close();
  await rm(dir, { recursive: true, force: true });
});

describe('BlobService', () => {
  it('validates ids, hashes and context ids before touching the store', async () => {
    const svc = new BlobService({ store });
    await expect(svc.info('nope')).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringContaining('Invalid blob ID format') });
    await expect(svc.info('ab'.repeat(32), 'bad')).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringContaining('context_id') });
    expect(() => svc.prepareUpload({ hash: 'xyz' })).toThrow(/hash is not a valid format/);
    expect(svc.prepareUpload({ hash: 'AB'.repeat(32) }).hash).toBe('ab'.repeat(32));
  });

  it('without context_id only the local store is searched: 404 naming context_id, peers never asked', async () => {
    const peers: PeerBlobSource = { fetch: vi.fn(async () => null) };
    const svc = new BlobService({ store, peers });
    await expect(svc.open('ab'.repeat(32))).rejects.toMatchObject({ kind: 'not_found', message: expect.stringContaining('context_id') });
    expect(peers.fetch).not.toHaveBeenCalled();
  });

  it('with context_id and no peer holding it: 404 saying so', async () => {
    const svc = new BlobService({ store });
    await expect(svc.info('ab'.repeat(32), CTX)).rejects.toMatchObject({ kind: 'not_found', message: expect.stringContaining('no peer') });
  });

  it('gives up after the discovery deadline even if the source ignores its signal', async () => {
    const peers: PeerBlobSource = { fetch: () => new Promise(() => undefined) };
    const svc = new BlobService({ store, peers, discoveryTimeoutMs: 50 });
    await expect(svc.open('ab'.repeat(32), CTX)).rejects.toMatchObject({ kind: 'not_found', message: expect.stringContaining('within') });
  });

  it('passes the blob id, context id and an abort signal to the peer source', async () => {
    const data = randomBytes(100);
    const id = idOfSmall(data);
    let seen: unknown[] = [];
    const peers: PeerBlobSource = {
      fetch: async (blobId, contextId, signal) => {
        seen = [blobId, contextId, signal instanceof AbortSignal];
        return Object.assign(once(data), { size: 100 }) as PeerBlobStream;
      },
    };
    const svc = new BlobService({ store, peers });
    expect(await svc.info(id, CTX)).toEqual({ blobId: id, size: 100, source: 'peer' });
    expect(seen).toEqual([id, CTX, true]);
    expect(await store.get(id)).toBeUndefined(); // HEAD does not store
    const { info, body } = await svc.open(id, CTX);
    expect(info).toMatchObject({ blobId: id, size: 100, source: 'peer', hash: sha(data) });
    expect((await readAll(body)).equals(data)).toBe(true);
    expect(await store.get(id)).toBeDefined(); // GET kept a verified copy
    expect((await svc.info(id)).source).toBe('local');
  });

  it('rejects peer bytes that do not hash to the requested id (502) and keeps nothing', async () => {
    const peers: PeerBlobSource = { fetch: async () => once(randomBytes(10)) };
    const svc = new BlobService({ store, peers });
    await expect(svc.open('ab'.repeat(32), CTX)).rejects.toMatchObject({ kind: 'bad_gateway' });
    expect(await svc.list()).toEqual([]);
  });

  it('upload, list, delete; pinned blobs answer 403', async () => {
    const svc = new BlobService({ store, isPinned: async (id) => id === 'ff'.repeat(32) });
    const r = await svc.upload(once(new Uint8Array([1, 2, 3])));
    expect(await svc.list()).toEqual([{ blobId: r.blobId, size: 3 }]);
    expect(await svc.delete(r.blobId.toUpperCase())).toMatchObject({ blobId: r.blobId, deleted: true });
    await expect(svc.delete('ff'.repeat(32))).rejects.toMatchObject({ kind: 'forbidden' });
    await expect(svc.delete(r.blobId)).rejects.toMatchObject({ kind: 'not_found' });
  });
});
