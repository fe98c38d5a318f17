import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import { MemoryStore } from '../store/memory.ts';
import { BlobStore, CHUNK_SIZE, blobIdOf } from './store.ts';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Yields `data` in pieces of `piece` bytes (like a socket would). */
async function* pieces(data: Uint8Array, piece = 64 * 1024): AsyncIterable<Uint8Array> {
  for (let i = 0; i < data.length; i += piece) yield data.subarray(i, i + piece);
}

async function readAll(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of it) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

let dir: string;
let kv: MemoryStore;
let blobs: BlobStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-blobs-'));
  kv = new MemoryStore();
  await kv.open();
  blobs = new BlobStore(kv, dir, { now: () => 1000 });
  await blobs.open();
});
afterEach(async () => {
  await kv.close();
  await rm(dir, { recursive: true, force: true });
});

const chunkFiles = () => readdir(join(dir, 'chunks'));
const tmpFiles = () => readdir(join(dir, 'tmp'));

describe('BlobStore ids (admin-wire-a §5.3)', () => {
  it('empty content: no chunks, id = SHA-256("")', async () => {
    const r = await blobs.put(pieces(new Uint8Array(0)));
    expect(r).toMatchObject({ blobId: sha(new Uint8Array(0)), size: 0, hash: sha(new Uint8Array(0)), created: true });
    expect((await blobs.get(r.blobId))?.chunks).toEqual([]);
    expect(await readAll(blobs.read((await blobs.get(r.blobId))!))).toHaveLength(0);
  });

  it('a small blob has id SHA-256(SHA-256(content))', async () => {
    const data = new TextEncoder().encode('hello');
    const r = await blobs.put(pieces(data));
    expect(r.blobId).toBe(sha(Buffer.from(sha(data), 'hex')));
    expect(r.hash).toBe(sha(data));
  });

  it.each([CHUNK_SIZE, CHUNK_SIZE + 1, 3 * CHUNK_SIZE - 7])('cuts %i bytes into 1 MiB chunks whatever the piece size', async (n) => {
    const data = randomBytes(n);
    const expected = [];
    for (let i = 0; i < n; i += CHUNK_SIZE) expected.push(sha(data.subarray(i, i + CHUNK_SIZE)));
    const r = await blobs.put(pieces(data, 300_001));
    expect(r.blobId).toBe(blobIdOf(expected));
    const meta = (await blobs.get(r.blobId))!;
    expect(meta.chunks).toEqual(expected);
    expect(meta.size).toBe(String(n));
    expect((await readAll(blobs.read(meta))).equals(data)).toBe(true);
    expect(await tmpFiles()).toEqual([]);
  });
});

describe('BlobStore refcounts', () => {
  it('a second upload increments; deletes decrement and remove at zero', async () => {
    const data = randomBytes(CHUNK_SIZE + 10);
    const a = await blobs.put(pieces(data));
    const b = await blobs.put(pieces(data));
    expect(b).toMatchObject({ blobId: a.blobId, created: false });
    expect((await blobs.get(a.blobId))?.refcount).toBe(2);
    expect(await chunkFiles()).toHaveLength(2);
    expect(await blobs.release(a.blobId)).toEqual({ refcount: 1, removed: false });
    expect(await blobs.get(a.blobId)).toBeDefined();
    expect(await blobs.release(a.blobId)).toEqual({ refcount: 0, removed: true });
    expect(await blobs.get(a.blobId)).toBeUndefined();
    expect(await chunkFiles()).toEqual([]);
    await expect(blobs.release(a.blobId)).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('keeps chunks another blob shares, and repeated chunks inside one blob', async () => {
    const one = randomBytes(CHUNK_SIZE);
    const two = Buffer.concat([one, one, Buffer.from('tail')]); // chunk `one` twice
    const a = await blobs.put(pieces(one));
    const b = await blobs.put(pieces(two));
    expect((await blobs.get(b.blobId))!.chunks).toHaveLength(3);
    expect(await chunkFiles()).toHaveLength(2);
    await blobs.release(a.blobId);
    expect(await chunkFiles()).toHaveLength(2);
    expect((await readAll(blobs.read((await blobs.get(b.blobId))!))).equals(two)).toBe(true);
    await blobs.release(b.blobId);
    expect(await chunkFiles()).toEqual([]);
  });
});

describe('BlobStore failures leave nothing behind', () => {
  it('a hash mismatch is a 400 and nothing is kept', async () => {
    const data = randomBytes(CHUNK_SIZE + 5);
    const err = await blobs.put(pieces(data), { expectedHash: 'ab'.repeat(32) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HearthError);
    expect((err as HearthError).kind).toBe('bad_request');
    expect(await chunkFiles()).toEqual([]);
    expect(await tmpFiles()).toEqual([]);
    for await (const _ of blobs.list()) throw new Error('listed');
  });

  it('an interrupted stream leaves no blob and no temp file', async () => {
    async function* broken() {
      yield randomBytes(CHUNK_SIZE + 100);
      throw new Error('aborted');
    }
    await expect(blobs.put(broken())).rejects.toThrow('aborted');
    expect(await tmpFiles()).toEqual([]);
    expect(await chunkFiles()).toEqual([]);
  });

  it('refuses blobs above the size cap with 413', async () => {
    const small = new BlobStore(kv, dir, { maxBytes: 10 });
    await expect(small.put(pieces(randomBytes(11)))).rejects.toMatchObject({ kind: 'payload_too_large' });
    expect(await tmpFiles()).toEqual([]);
  });

  it('open() clears temp files and unreferenced chunk files from a crash', async () => {
    const kept = await blobs.put(pieces(randomBytes(100)));
    await writeFile(join(dir, 'tmp', 'stale.0'), 'x');
    await writeFile(join(dir, 'chunks', 'cd'.repeat(32)), 'orphan');
    await blobs.open();
    expect(await tmpFiles()).toEqual([]);
    expect(await chunkFiles()).toEqual((await blobs.get(kept.blobId))!.chunks);
  });

  it('verifies an expected id (bytes from a peer)', async () => {
    await expect(blobs.put(pieces(randomBytes(10)), { expectedId: '00'.repeat(32) })).rejects.toMatchObject({ kind: 'bad_gateway' });
    expect(await chunkFiles()).toEqual([]);
  });

  it('concurrent uploads of the same content end with one blob and refcount 2', async () => {
    const data = randomBytes(2 * CHUNK_SIZE);
    const [a, b] = await Promise.all([blobs.put(pieces(data)), blobs.put(pieces(data))]);
    expect(a.blobId).toBe(b.blobId);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect((await blobs.get(a.blobId))?.refcount).toBe(2);
    expect(await chunkFiles()).toHaveLength(2);
  });
});

describe('BlobStore change listeners (the DHT announcer’s source)', () => {
  it('tells of blobs created and removed, not of references added or dropped on a blob that stays', async () => {
    const seen: { added: string[]; removed: string[] }[] = [];
    const off = blobs.onChange((c) => seen.push(c));
    blobs.onChange(() => {
      throw new Error('a listener that throws changes nothing');
    });
    const a = randomBytes(100);
    const { blobId } = await blobs.put(pieces(a, 7));
    await blobs.put(pieces(a, 7)); // a second reference: no change
    expect(seen).toEqual([{ added: [blobId], removed: [] }]);
    await blobs.release(blobId); // one reference left
    await blobs.change({ release: ['ab'.repeat(32)] }); // not stored: skipped
    expect(seen).toHaveLength(1);
    await blobs.release(blobId);
    expect(seen).toEqual([
      { added: [blobId], removed: [] },
      { added: [], removed: [blobId] },
    ]);
    off();
    await blobs.put(pieces(a, 7));
    expect(seen).toHaveLength(2);
  });
});
