import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collect, type Store } from './store.ts';
import { MemoryStore } from './memory.ts';
import { LevelStore } from './level.ts';

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
