import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { ClassicLevel } from 'classic-level';
import { HearthError } from '../errors.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collect, type Store } from './store.ts';
import { MemoryStore } from './memory.ts';
import { LevelStore } from './level.ts';
import { chainedBatchPrototype } from '../../test/helpers/level.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function level(): Promise<LevelStore> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-store-'));
  dirs.push(dir);
  const s = new LevelStore(join(dir, 'data'));
  await s.open();
  return s;
}

const impls: [string, () => Promise<Store>][] = [
  ['memory', async () => new MemoryStore()],
  ['level', level],
];

describe.each(impls)('%s store', (_name, make) => {
  it('round-trips JSON values and reports absent keys as undefined', async () => {
    const s = await make();
    const sp = s.space<{ a: number; n: string }>('things');
    await sp.put('k', { a: 1, n: '18446744073709551615' });
    expect(await sp.get('k')).toEqual({ a: 1, n: '18446744073709551615' });
    expect(await sp.get('missing')).toBeUndefined();
    await sp.del('k');
    expect(await sp.get('k')).toBeUndefined();
    await s.close();
  });

  it('keeps spaces apart and iterates a prefix in key order', async () => {
    const s = await make();
    const a = s.space<number>('a');
    const b = s.space<number>('b');
    for (const k of ['x:2', 'x:1', 'y:1', 'x:3']) await a.put(k, 1);
    await b.put('x:0', 2);
    expect((await collect(a.entries({ prefix: 'x:' }))).map(([k]) => k)).toEqual(['x:1', 'x:2', 'x:3']);
    expect((await collect(a.entries({ prefix: 'x:', reverse: true, limit: 2 }))).map(([k]) => k)).toEqual(['x:3', 'x:2']);
    expect((await collect(a.entries({ prefix: 'x:', after: 'x:1' }))).map(([k]) => k)).toEqual(['x:2', 'x:3']);
    expect((await collect(b.entries())).length).toBe(1);
    await s.close();
  });

  it('applies a batch across spaces atomically, or not at all when a value cannot be encoded', async () => {
    const s = await make();
    const a = s.space<string>('a');
    const raw = s.space<Uint8Array>('raw', 'bytes');
    await s.batch([a.putOp('1', 'one'), raw.putOp('1', new Uint8Array([1, 2]))]);
    expect(await a.get('1')).toBe('one');
    expect(Buffer.from((await raw.get('1'))!)).toEqual(Buffer.from([1, 2]));
    await expect(s.batch([a.putOp('2', 'two'), raw.putOp('2', 'not bytes' as never)])).rejects.toThrow();
    expect(await a.get('2')).toBeUndefined();
    await s.batch([a.delOp('1'), raw.delOp('1')]);
    expect(await a.get('1')).toBeUndefined();
    expect(await s.ping()).toBe(true);
    await s.close();
  });
});

describe('level store', () => {
  it('keeps data across close and reopen', async () => {
    const s = await level();
    await s.space<string>('keys').put('k', 'v');
    await s.close();
    const again = new LevelStore(s.location);
    await again.open();
    expect(await again.space<string>('keys').get('k')).toBe('v');
    await again.close();
  });
});

describe('level store durability (issue #17 finding 9)', () => {
  it('syncs every write: batches, puts and deletes', async () => {
    const s = await level();
    const spy = vi.spyOn(await chainedBatchPrototype(), 'write');
    try {
      const sp = s.space<string>('keys');
      await sp.put('a', '1');
      await sp.del('a');
      await s.batch([sp.putOp('b', '2')]);
      expect(spy).toHaveBeenCalledTimes(3);
      for (const call of spy.mock.calls as unknown[][]) expect(call[0]).toMatchObject({ sync: true });
    } finally {
      spy.mockRestore();
      await s.close();
    }
  });

  it('creates its directory 0700 and its files 0600', async () => {
    const s = await level();
    const sp = s.space<string>('keys');
    for (let i = 0; i < 50; i++) await sp.put(`k${i}`, 'x'.repeat(1000));
    await s.close();
    expect((await stat(s.location)).mode & 0o777).toBe(0o700);
    const files = await readdir(s.location);
    expect(files.length).toBeGreaterThan(2);
    for (const f of files) expect([f, (await stat(`${s.location}/${f}`)).mode & 0o077]).toEqual([f, 0]);
  });
});

describe('level store failure (issue #17 finding 1)', () => {
  const ioError = () => Object.assign(new Error('IO error: data/000123.ldb: Too many open files'), { code: 'LEVEL_IO_ERROR' });

  it('marks itself failed on an IO error: told once, health says why, operations answer 503 until reopened', async () => {
    const s = await level();
    const sp = s.space<string>('keys');
    await sp.put('kept', 'yes');
    const told: string[] = [];
    s.onFailure((cause) => told.push(cause));
    const spy = vi.spyOn(await chainedBatchPrototype(), 'write').mockRejectedValueOnce(ioError());
    const err = await sp.put('k', 'v').catch((e: unknown) => e);
    spy.mockRestore();
    expect(err).toBeInstanceOf(HearthError);
    expect((err as HearthError).kind).toBe('unavailable');
    expect((err as HearthError).extra.retryAfterSecs).toBeGreaterThan(0);
    expect(await sp.get('kept').catch((e: HearthError) => e.kind)).toBe('unavailable');
    await sp.put('k2', 'v').catch(() => undefined);
    expect(told).toEqual(['IO error: data/000123.ldb: Too many open files']);
    expect(await s.health()).toEqual({ ok: false, reason: told[0] });
    await s.reopen();
    expect(await s.health()).toEqual({ ok: true });
    expect(await sp.get('kept')).toBe('yes');
    await sp.put('k', 'v');
    expect(await sp.get('k')).toBe('v');
    await s.close();
  });

  it('reports a store that reads but cannot write as unhealthy', async () => {
    const s = await level();
    const spy = vi.spyOn(ClassicLevel.prototype, 'put').mockRejectedValueOnce(ioError());
    const health = await s.health();
    spy.mockRestore();
    expect(health.ok).toBe(false);
    await s.close();
  });

  it('answers its last known health from memory: the last probe, and a failed operation at once', async () => {
    const s = await level();
    expect(s.status()).toEqual({ ok: true });
    const put = vi.spyOn(ClassicLevel.prototype, 'put').mockRejectedValueOnce(new Error('probe refused'));
    vi.spyOn(Date, 'now').mockReturnValueOnce(Date.now() + 60_000); // past the reuse of the last healthy probe
    await s.health();
    put.mockRestore();
    vi.restoreAllMocks();
    expect(s.status()).toEqual({ ok: false, reason: 'the store does not answer: probe refused' });
    // a later probe that passes makes it healthy again
    vi.spyOn(Date, 'now').mockReturnValueOnce(Date.now() + 120_000);
    await s.health();
    vi.restoreAllMocks();
    expect(s.status()).toEqual({ ok: true });
    // an IO error of any operation shows without a probe
    const batch = vi.spyOn(await chainedBatchPrototype(), 'write').mockRejectedValueOnce(ioError());
    await s.space<string>('keys').put('k', 'v').catch(() => undefined);
    batch.mockRestore();
    expect(s.status()).toEqual({ ok: false, reason: 'IO error: data/000123.ldb: Too many open files' });
    await s.close();
    expect(s.status().ok).toBe(false);
  });
});
