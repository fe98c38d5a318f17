/**
 * The blob quota and the disk reserve (quota.ts, issue #37 item 1), on a fake disk: a declared size
 * that cannot fit is refused before any byte is read, a stream of unknown size when it reaches a
 * bound, concurrent uploads count each other, and nothing is left behind. The real full disk is
 * test/e2e/faults/disk-full.e2e.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import { MemoryStore } from '../store/memory.ts';
import { BlobQuota, resolveQuota, resolveReserve, type DiskSpace } from './quota.ts';
import { BlobStore, CHUNK_SIZE } from './store.ts';

const MiB = 1024 * 1024;

async function* pieces(data: Uint8Array, piece = 256 * 1024): AsyncIterable<Uint8Array> {
  for (let i = 0; i < data.length; i += piece) yield data.subarray(i, i + piece);
}

/** A source that fails the test if anything reads it. */
const unread: AsyncIterable<Uint8Array> = {
  [Symbol.asyncIterator]() {
    throw new Error('the body was read');
  },
};

describe('resolveReserve / resolveQuota', () => {
  it('derives the reserve as 5 % of the filesystem within [32 MiB, 1 GiB]; a configured value wins', () => {
    expect(resolveReserve(0, 300 * MiB)).toBe(32 * MiB);
    expect(resolveReserve(0, 10_000 * MiB)).toBe(500 * MiB);
    expect(resolveReserve(0, 100_000 * MiB)).toBe(1024 * MiB);
    expect(resolveReserve(5 * MiB, 300 * MiB)).toBe(5 * MiB);
  });
  it('derives the quota as the stored bytes plus a share of the free space beyond the reserve', () => {
    const disk = { free: 232 * MiB, size: 300 * MiB };
    expect(resolveQuota({ quotaBytes: 0, quotaFreePercent: 50, diskReserveBytes: 0 }, 10 * MiB, disk, 32 * MiB)).toBe(110 * MiB);
    expect(resolveQuota({ quotaBytes: 0, quotaFreePercent: 50, diskReserveBytes: 0 }, 0, { free: 10 * MiB, size: 300 * MiB }, 32 * MiB)).toBe(0);
    expect(resolveQuota({ quotaBytes: 7 * MiB, quotaFreePercent: 50, diskReserveBytes: 0 }, 10 * MiB, disk, 32 * MiB)).toBe(7 * MiB);
  });
});

describe('BlobStore under a quota and a reserve', () => {
  let dir: string;
  let kv: MemoryStore;
  /** the fake disk: its free space shrinks as chunk files are written (tracked by the test) */
  let disk: DiskSpace;
  const fakeDisk = async () => ({ ...disk });

  async function storeWith(cfg: { quotaBytes?: number; diskReserveBytes?: number }) {
    const quota = new BlobQuota(dir, { quotaBytes: 0, quotaFreePercent: 50, diskReserveBytes: 0, ...cfg }, fakeDisk);
    const blobs = new BlobStore(kv, dir, { quota });
    await blobs.open();
    return blobs;
  }
  const leftovers = async () => [...(await readdir(join(dir, 'tmp'))), ...(await readdir(join(dir, 'chunks')))];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hearth-quota-'));
    kv = new MemoryStore();
    await kv.open();
    disk = { free: 1000 * MiB, size: 2000 * MiB };
  });
  afterEach(async () => {
    await kv.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a declared size beyond the quota with 507 naming the quota, before reading a byte', async () => {
    const blobs = await storeWith({ quotaBytes: 4 * MiB });
    const err = await blobs.put(unread, { declaredBytes: 5 * MiB }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HearthError);
    expect((err as HearthError).kind).toBe('insufficient_storage');
    expect((err as HearthError).message).toMatch(/quota is full.*quota_bytes/);
    expect(blobs.quota.refusedBy('quota')).toBe(1);
    expect(blobs.quota.state.granted).toBe(0);
  });

  it('refuses a declared size that would leave less than the reserve free, naming the disk', async () => {
    disk = { free: 40 * MiB, size: 300 * MiB };
    const blobs = await storeWith({ quotaBytes: 100 * MiB, diskReserveBytes: 32 * MiB });
    const err = (await blobs.put(unread, { declaredBytes: 9 * MiB }).catch((e: unknown) => e)) as HearthError;
    expect(err.kind).toBe('insufficient_storage');
    expect(err.message).toMatch(/disk .* nearly full.*disk_reserve_bytes/);
    expect(blobs.quota.refusedBy('disk')).toBe(1);
    // within the reserve it fits
    await expect(blobs.put(pieces(randomBytes(7 * MiB)), { declaredBytes: 7 * MiB })).resolves.toMatchObject({ size: 7 * MiB });
  });

  it('stops a stream of unknown size at the quota, leaving nothing behind; what fits is stored and counted', async () => {
    const blobs = await storeWith({ quotaBytes: 5 * MiB });
    const err = (await blobs.put(pieces(randomBytes(8 * MiB))).catch((e: unknown) => e)) as HearthError;
    expect(err.kind).toBe('insufficient_storage');
    expect(await leftovers()).toEqual([]);
    expect(blobs.quota.state).toMatchObject({ used: 0, granted: 0 });
    const ok = await blobs.put(pieces(randomBytes(3 * MiB + 5)));
    expect(blobs.quota.state).toMatchObject({ used: 3 * MiB + 5, granted: 0 });
    // the rest of the quota: 2 MiB - 5 bytes
    await expect(blobs.put(pieces(randomBytes(2 * MiB)))).rejects.toMatchObject({ kind: 'insufficient_storage' });
    await blobs.release(ok.blobId);
    expect(blobs.quota.state.used).toBe(0);
    await expect(blobs.put(pieces(randomBytes(4 * MiB)))).resolves.toMatchObject({ size: 4 * MiB });
  });

  it('counts concurrent uploads against each other, and a deduplicated blob once', async () => {
    const blobs = await storeWith({ quotaBytes: 6 * MiB });
    const data = randomBytes(2 * CHUNK_SIZE);
    const [a, b] = await Promise.all([blobs.put(pieces(data), { declaredBytes: data.length }), blobs.put(pieces(data), { declaredBytes: data.length })]);
    expect(a.blobId).toBe(b.blobId);
    expect(blobs.quota.state).toMatchObject({ used: 2 * MiB, granted: 0 });
    // two 3 MiB uploads at once where 4 MiB are left: one is refused at once
    const results = await Promise.allSettled([
      blobs.put(pieces(randomBytes(3 * MiB)), { declaredBytes: 3 * MiB }),
      blobs.put(pieces(randomBytes(3 * MiB)), { declaredBytes: 3 * MiB }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(blobs.quota.state).toMatchObject({ used: 5 * MiB, granted: 0 });
  });

  it('counts the chunks a restart finds, and reports it all as metrics', async () => {
    const first = await storeWith({ quotaBytes: 10 * MiB });
    await first.put(pieces(randomBytes(MiB + 10)));
    const again = await storeWith({ quotaBytes: 10 * MiB });
    expect(again.quota.state.used).toBe(MiB + 10);
    await again.put(unread, { declaredBytes: 20 * MiB }).catch(() => undefined);
    const series = Object.fromEntries(await Promise.all(again.quota.series().map(async (s) => [s.name, await s.read()] as const)));
    expect(series.hearth_blob_bytes).toEqual([{ value: MiB + 10 }]);
    expect(series.hearth_blob_quota_bytes).toEqual([{ value: 10 * MiB }]);
    expect(series.hearth_disk_free_bytes).toEqual([{ value: 1000 * MiB }]);
    expect(series.hearth_blob_refused_total).toEqual([
      { labels: { reason: 'quota' }, value: 1 },
      { labels: { reason: 'disk' }, value: 0 },
    ]);
  });
});
