/**
 * The real-app-shaped test application (test/apps/kv_store.ts, issue #22): it behaves towards the
 * host like the reference SDK's kv-store: memory grows in every call from a fresh instance, a `get`
 * makes 26 small host calls (6 `storage_read`), a `set` about 250 (about 50 reads) and rewrites the
 * map's one index entry; and it replicates through `__calimero_sync_next` like the kv app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KvReplica, decodeKvArtifact } from '../../test/helpers/kv-replica.ts';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import { compileGuest, type CompiledGuest } from './compile.ts';
import type { CallResult } from './call-types.ts';
import { execute } from './execute.ts';
import type { HostFn } from './host-state.ts';
import type { InstancePool } from './instances.ts';
import { DEFAULT_LIMITS } from './limits.ts';
import { WasmRuntime } from './runtime.ts';
import { MemoryView } from './test-support.ts';

let wasm: Uint8Array;
let guest: CompiledGuest;
let rt: WasmRuntime;

beforeAll(async () => {
  wasm = await buildTestApp('kv_store');
  guest = await compileGuest(wasm, DEFAULT_LIMITS);
  rt = new WasmRuntime({ poolSize: 2 });
  await rt.start();
}, 300_000);

afterAll(async () => {
  await rt?.stop();
});

/** Runs calls on fresh instances against one in-memory store, counting host calls and memory pages. */
function counted() {
  const view = new MemoryView();
  const backend = {
    hasIndexMeta: false,
    hasBlobs: false,
    get: (space: string, key: Uint8Array) => (space === 'state' ? view.entries.get(Buffer.from(key).toString('hex'))?.[1] : undefined),
    range: () => [],
  } as never;
  let counts: Record<string, number> = {};
  let pages: [number, number] = [0, 0];
  const pool = {
    take(imports: Record<string, HostFn>) {
      const env: Record<string, HostFn> = {};
      for (const [name, f] of Object.entries(imports)) {
        env[name] = (...args: bigint[]) => {
          counts[name] = (counts[name] ?? 0) + 1;
          return f(...args);
        };
      }
      const instance = new WebAssembly.Instance(guest.module, { env });
      const memory = instance.exports.memory as WebAssembly.Memory;
      pages = [memory.buffer.byteLength / 65536, 0];
      return { instance, done: () => (pages[1] = memory.buffer.byteLength / 65536) };
    },
  } as unknown as InstancePool;
  const call = (method: string, args?: unknown) => {
    counts = {};
    const input = new TextEncoder().encode(args === undefined ? '' : JSON.stringify(args));
    const r: CallResult = execute(pool, guest.exportTypes, { method, input, contextId: new Uint8Array(32), executorId: new Uint8Array(32).fill(1), deviceId: new Uint8Array(32), readOnly: false }, backend, DEFAULT_LIMITS);
    if (!r.ok) throw new Error(`${method}: ${r.kind}: ${r.message}`);
    view.apply(r.writes);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    return { r, total, reads: counts.storage_read ?? 0, pages: [...pages], out: r.output ? new TextDecoder().decode(r.output) : undefined };
  };
  return { call, view };
}

describe('kv_store: shaped like the reference SDK’s output', () => {
  it('grows its memory in every call, and makes many small host calls: get 26 (6 reads), set ~250 (~50 reads)', () => {
    const { call, view } = counted();
    const init = call('init');
    expect(init.pages[0]).toBe(17);
    expect(init.pages[1]).toBeGreaterThan(init.pages[0]);
    for (let i = 0; i < 50; i++) call('set', { key: `k${i}`, value: `v${i}` });
    const set = call('set', { key: 'k7', value: 'changed' });
    expect(set.pages[1]).toBeGreaterThan(set.pages[0]);
    expect(set.total).toBeGreaterThanOrEqual(200);
    expect(set.total).toBeLessThanOrEqual(300);
    expect(set.reads).toBeGreaterThanOrEqual(45);
    expect(set.reads).toBeLessThanOrEqual(60);
    // the map's index is one entry, rewritten by every set (an update too)
    expect(set.r.writes.map(([k]) => Buffer.from(k).toString())).toContain('kv:state');
    expect(set.r.events.map((e) => [e.kind, new TextDecoder().decode(e.data)])).toEqual([['Updated', '{"key":"k7","value":"changed"}']]);
    const get = call('get', { key: 'k7' });
    expect(get.out).toBe('"changed"');
    expect([get.total, get.reads]).toEqual([26, 6]);
    expect(get.pages[1]).toBeGreaterThan(get.pages[0]);
    expect(call('len').out).toBe('50');
    expect(call('get', { key: 'absent' }).out).toBe('null');
    expect(call('remove', { key: 'k7' }).out).toBe('"changed"');
    expect(call('len').out).toBe('49');
    expect(view.text('kv:meta')).toBe('kv_store/1');
  });

  it('answers like the kv app: entries, an application error, a panic, clear', async () => {
    const a = new KvReplica(rt, wasm, 0xa1, 'kv_store');
    await a.call('init');
    await a.call('set', { key: 'b', value: '2' });
    await a.call('set', { key: 'a', value: '1' });
    expect(JSON.parse(await a.view('entries'))).toEqual({ b: '2', a: '1' });
    expect(await a.view('get_result', { key: 'a' })).toBe('"1"');
    await expect(a.view('get_result', { key: 'zz' })).rejects.toThrow(/AppError/);
    await expect(a.view('get_unchecked', { key: 'zz' })).rejects.toThrow(/key not found/);
    const cleared = await a.call('clear');
    expect(cleared.events).toEqual([{ kind: 'Cleared', data: '' }]);
    expect(await a.view('len')).toBe('0');
    await expect(new KvReplica(rt, wasm, 0xa2, 'kv_store').view('get', { key: 'a' })).rejects.toThrow(/Failed to find or read app state/);
  });

  it('replicates: concurrent writes on two nodes converge to the same rows, root and entries in any order', async () => {
    const a = new KvReplica(rt, wasm, 0xa1, 'kv_store');
    const genesis = await a.call('init');
    const b = new KvReplica(rt, wasm, 0xb1, 'kv_store');
    expect((await b.applyDelta(genesis.artifact)).ok).toBe(true);
    expect(b.rows()).toEqual(a.rows());
    const fromA = [(await a.call('set', { key: 'x', value: 'a1' })).artifact, (await a.call('set', { key: 'shared', value: 'from a' })).artifact];
    const fromB = [(await b.call('set', { key: 'y', value: 'b1' })).artifact, (await b.call('set', { key: 'shared', value: 'from b' })).artifact];
    expect(decodeKvArtifact(fromA[0]).map((o) => o.key)).toEqual(['x']);
    const removed = (await a.call('remove', { key: 'x' })).artifact;
    for (const d of [...fromB]) expect((await a.applyDelta(d)).ok).toBe(true);
    for (const d of [...fromA, removed, fromA[0]]) expect((await b.applyDelta(d)).ok).toBe(true);
    expect(b.rows()).toEqual(a.rows());
    expect(b.root).toBe(a.root);
    expect(JSON.parse(await a.view('entries'))).toEqual({ y: 'b1', shared: 'from b' });
    expect(await b.view('entries')).toBe(await a.view('entries'));
    // a third node applying them in yet another causal order lands on the same rows
    const c = new KvReplica(rt, wasm, 0xc1, 'kv_store');
    for (const d of [genesis.artifact, fromB[0], fromA[0], fromB[1], fromA[1], removed]) expect((await c.applyDelta(d)).ok).toBe(true);
    expect(c.rows()).toEqual(a.rows());
    expect(c.root).toBe(a.root);
  });
});
