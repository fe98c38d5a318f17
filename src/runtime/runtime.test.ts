/**
 * The runtime as the contexts domain uses it: the kv-store app end to end, the worker pool under
 * deadlines and aborts, the compile cache, guest validation, and the memory limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import type { CallRequest, CallResult, CallSuccess } from './call-types.ts';
import { HearthError } from '../errors.ts';
import { WasmRuntime } from './runtime.ts';
import { newViews, output, request, type Views } from './test-support.ts';

const text = (b: Uint8Array | null) => (b ? new TextDecoder().decode(b) : b);
const apps: Record<string, Uint8Array> = {};
let rt: WasmRuntime;

beforeAll(async () => {
  const plain = { ascFlags: [] as string[] };
  const [kv, spin, hostcalls, unknownImport, wrongSig, importsMemory, start, noMemory, hugeMemory] = await Promise.all([
    buildTestApp('kv'),
    buildTestApp('spin'),
    buildTestApp('hostcalls'),
    buildTestApp('unknown_import'),
    buildTestApp('wrong_signature'),
    buildTestApp('plain', { ascFlags: ['--importMemory'] }),
    buildTestApp('plain', { ascFlags: ['--exportStart', '_start'] }),
    buildTestApp('plain', { ascFlags: ['--noExportMemory'] }),
    buildTestApp('plain', { ascFlags: ['--initialMemory', '1100'] }),
    buildTestApp('plain', plain),
  ]);
  Object.assign(apps, { kv, spin, hostcalls, unknownImport, wrongSig, importsMemory, start, noMemory, hugeMemory });
  rt = new WasmRuntime({ poolSize: 2 });
  await rt.start();
}, 300_000);

afterAll(async () => {
  await rt?.stop();
});

function kvCall(method: string, args: unknown, views: Views, extra: Partial<CallRequest> = {}) {
  return rt.call(request('kv', apps.kv, method, args, views, extra));
}

/** runs a write call and persists its writes, as the contexts domain does on success */
async function commitCall(method: string, args: unknown, views: Views): Promise<CallSuccess> {
  const r = await kvCall(method, args, views);
  if (!r.ok) throw new Error(`${method}: ${r.kind}: ${r.message}`);
  views.state.apply(r.writes);
  return r;
}

describe('kv-store', () => {
  it('runs the kv-store API with its return values, events, logs and commits', async () => {
    const v = newViews();
    const init = await commitCall('init', undefined, v);
    expect(init.output).toBeNull();
    expect(init.commit!.rootHash).toHaveLength(32);
    const emptyRoot = Buffer.from(init.commit!.rootHash).toString('hex');

    const set = await commitCall('set', { key: 'k1', value: 'v1' }, v);
    expect(output(set)).toBeNull();
    expect(set.logs).toEqual(['Setting key: "k1" to value: "v1"']);
    expect(set.events.map((e) => [e.kind, text(e.data), e.handler])).toEqual([['Inserted', '{"key":"k1","value":"v1"}', null]]);
    expect(Buffer.from(set.commit!.rootHash).toString('hex')).not.toBe(emptyRoot);

    const again = await commitCall('set', { key: 'k1', value: 'v2' }, v);
    expect(again.events[0].kind).toBe('Updated');
    await commitCall('set', { key: 'k2', value: 'hello' }, v);

    const get = await kvCall('get', { key: 'k1' }, v, { readOnly: true });
    expect([output(get), (get as CallSuccess).commit]).toEqual(['v2', null]);
    expect(output(await kvCall('entries', {}, v, { readOnly: true }))).toEqual({ k1: 'v2', k2: 'hello' });
    expect(output(await kvCall('len', null, v, { readOnly: true }))).toBe(2);

    const rm = await commitCall('remove', { key: 'k2' }, v);
    expect(output(rm)).toBe('hello');
    expect(rm.events.map((e) => [e.kind, text(e.data)])).toEqual([['Removed', '{"key":"k2"}']]);

    const clear = await commitCall('clear', undefined, v);
    expect(clear.events.map((e) => [e.kind, e.data.length])).toEqual([['Cleared', 0]]);
    expect(Buffer.from(clear.commit!.rootHash).toString('hex')).toBe(emptyRoot);
    expect(output(await kvCall('len', undefined, v))).toBe(0);
  });

  it('reports the reference’s failures: app error bytes, panics with locations, init twice', async () => {
    const v = newViews();
    expect(await kvCall('get', { key: 'x' }, v)).toMatchObject({
      ok: false,
      kind: 'Panic',
      message: 'guest panicked: Failed to find or read app state at apps/kv/src/lib.rs:123:16',
    });
    await commitCall('init', undefined, v);
    expect(await kvCall('init', undefined, v)).toMatchObject({ kind: 'Panic', message: expect.stringContaining('Cannot initialize over already existing state.') });
    const err = await kvCall('get_result', { key: 'nope' }, v);
    const debug = Array.from(new TextEncoder().encode('{"data":"nope","kind":"NotFound"}')).join(', ');
    expect(err).toEqual({ ok: false, kind: 'AppError', message: `the method call returned an error: [${debug}]`, logs: [] });
    expect(await kvCall('get_unchecked', { key: 'nope' }, v)).toMatchObject({ kind: 'Panic', message: 'guest panicked: key not found at apps/kv/src/lib.rs:133:33' });
    expect(await kvCall('len', { foo: 1 }, v)).toMatchObject({ kind: 'Panic', message: expect.stringContaining('len: takes no arguments') });
  });

  it('a read-only call of a committing method is refused and reports no writes', async () => {
    const v = newViews();
    await commitCall('init', undefined, v);
    const r = await kvCall('set', { key: 'k', value: 'v' }, v, { readOnly: true });
    expect(r).toMatchObject({ ok: false, kind: 'HostError', message: 'commit refused: the method is read-only (a view cannot change state)' });
    expect(v.state.text('kv:item:k')).toBeUndefined();
  });
});

describe('method resolution', () => {
  const call = (method: string) => rt.call(request('hostcalls', apps.hostcalls, method, undefined, newViews()));

  it('refuses invalid method names before instantiating, as the reference', async () => {
    expect(await call('')).toMatchObject({ kind: 'InvalidMethodName', message: 'method name is empty' });
    expect(await call('bad-name')).toMatchObject({ kind: 'InvalidMethodName', message: "method name contains invalid character at position 3: '-'" });
    expect(await call('m'.repeat(257))).toMatchObject({ kind: 'InvalidMethodName', message: 'method name too long: 257 bytes (max: 256)' });
  });

  it('answers MethodNotFound for a missing export and for a method not typed () -> ()', async () => {
    expect(await call('nope')).toMatchObject({ kind: 'MethodNotFound', message: 'method "nope" not found' });
    expect(await call('with_args')).toMatchObject({
      kind: 'MethodNotFound',
      message: 'method "with_args" has invalid signature: expected no arguments and no return value',
    });
  });
});

describe('guest validation', () => {
  const call = (app: string) => rt.call(request(app, apps[app], 'run', undefined, newViews()));

  it('an unknown import fails with a clear CompileError naming it', async () => {
    const r = await call('unknownImport');
    expect(r).toMatchObject({ ok: false, kind: 'CompileError' });
    expect((r as { message: string }).message).toBe(
      'link error: Error while importing "env"."not_a_host_function": unknown import (this node does not provide it)',
    );
  });

  it('a host function imported with the wrong type fails to link', async () => {
    expect(await call('wrongSig')).toMatchObject({
      kind: 'CompileError',
      message: 'link error: Error while importing "env"."log_utf8": incompatible import type. Expected (i64) -> () but received (i32) -> ()',
    });
  });

  it('refuses imported memory, an exported _start, no exported memory, and an initial memory past 64 MiB', async () => {
    expect(await call('importsMemory')).toMatchObject({ kind: 'CompileError', message: expect.stringMatching(/^module rejected by validation: guest imports memory `env::memory`/) });
    expect(await call('start')).toMatchObject({ kind: 'CompileError', message: expect.stringMatching(/exports a `_start` function/) });
    expect(await call('noMemory')).toMatchObject({ kind: 'CompileError', message: expect.stringMatching(/does not export a linear memory named `memory`/) });
    expect(await call('hugeMemory')).toMatchObject({ kind: 'CompileError', message: expect.stringMatching(/1100 pages, more than the limit of 1024/) });
  });

  it('a module over the size limit is refused before compiling', async () => {
    const small = new WasmRuntime({ poolSize: 1, limits: { maxModuleSize: 1000 } });
    await small.start();
    try {
      expect(await small.call(request('big', apps.hostcalls, 'nothing', undefined, newViews()))).toMatchObject({
        kind: 'CompileError',
        message: `module size limit (max_module_size) exceeded: ${apps.hostcalls.length} bytes > 1000 bytes limit`,
      });
    } finally {
      await small.stop();
    }
  });

  it('bytes that are not wasm are a compilation error', async () => {
    const r = await rt.call(request('garbage', new Uint8Array([1, 2, 3, 4]), 'run', undefined, newViews()));
    expect(r).toMatchObject({ kind: 'CompileError', message: expect.stringMatching(/^compilation error: /) });
  });
});

describe('compile cache', () => {
  it('compiles a module once per application id and evicts the least recently used', async () => {
    const small = new WasmRuntime({ poolSize: 1, moduleCacheSize: 2 });
    await small.start();
    try {
      const loads: string[] = [];
      const run = (appId: string) =>
        small.call({ ...request(appId, apps.hostcalls, 'nothing', undefined, newViews()), wasm: async () => (loads.push(appId), apps.hostcalls) });
      for (const id of ['a', 'a', 'b', 'a', 'c', 'a', 'b']) expect((await run(id)).ok).toBe(true);
      // b was evicted by c (a was used more recently), so only b is loaded twice
      expect(loads).toEqual(['a', 'b', 'c', 'b']);
      expect(small.cachedModules).toBe(2);
    } finally {
      await small.stop();
    }
  });

  it('a module that fails to compile is not cached', async () => {
    let loads = 0;
    const req = { ...request('bad', new Uint8Array([0]), 'run', undefined, newViews()), wasm: async () => (loads++, new Uint8Array([0])) };
    await rt.call(req);
    await rt.call(req);
    expect(loads).toBe(2);
  });
});

describe('deadline, abort and the pool', () => {
  it('a runaway guest is stopped at the deadline with no writes, and the pool recovers', async () => {
    const one = new WasmRuntime({ poolSize: 1, deadlineMs: 300 });
    await one.start();
    try {
      const v = newViews();
      const t0 = Date.now();
      const r = await one.call(request('spin', apps.spin, 'write_then_spin', undefined, v));
      expect(r).toEqual({ ok: false, kind: 'Deadline', message: 'execution exceeded its deadline of 300 ms', logs: [] });
      expect(Date.now() - t0).toBeLessThan(3_000);
      // the only worker was replaced: the next call runs
      expect(output(await one.call(request('spin', apps.spin, 'quick', undefined, v)))).toBe('done');
      // a per-call deadline overrides the default
      expect(await one.call(request('spin', apps.spin, 'spin', undefined, v, { deadlineMs: 100 }))).toMatchObject({ kind: 'Deadline', message: expect.stringContaining('100 ms') });
    } finally {
      await one.stop();
    }
  });

  it('a guest blocked on a read the node never answers is cut by the deadline; a failing view is a host error', async () => {
    const one = new WasmRuntime({ poolSize: 1, deadlineMs: 300 });
    await one.start();
    try {
      const stuck = newViews();
      stuck.state.get = () => new Promise(() => {});
      const r = await one.call(request('hostcalls', apps.hostcalls, 'read', { key: 'k' }, stuck));
      expect(r).toMatchObject({ ok: false, kind: 'Deadline' });
      const broken = newViews();
      broken.state.get = async () => {
        throw new Error('disk on fire');
      };
      expect(await one.call(request('hostcalls', apps.hostcalls, 'read', { key: 'k' }, broken))).toMatchObject({
        ok: false,
        kind: 'HostError',
        message: 'host panicked: disk on fire',
      });
      const fine = newViews();
      fine.state.put('k', 'v');
      expect(output(await one.call(request('hostcalls', apps.hostcalls, 'read', { key: 'k' }, fine)))).toBe('v');
    } finally {
      await one.stop();
    }
  });

  it('an abort answers a running call at once, a queued call, and a call aborted before it starts', async () => {
    const one = new WasmRuntime({ poolSize: 1, deadlineMs: 2_500 });
    await one.start({ warm: true }); // the worker is up: the first call runs at once
    try {
      const v = newViews();
      const running = new AbortController();
      const first = one.call(request('spin', apps.spin, 'spin', undefined, v, { signal: running.signal }));
      const queued = new AbortController();
      const second = one.call(request('spin', apps.spin, 'quick', undefined, v, { signal: queued.signal }));
      setTimeout(() => queued.abort(), 50);
      expect(await second).toMatchObject({ ok: false, kind: 'Aborted' });
      setTimeout(() => running.abort(), 50);
      const t0 = Date.now();
      expect(await first).toMatchObject({ ok: false, kind: 'Aborted', message: 'execution aborted' });
      expect(Date.now() - t0).toBeLessThan(1_500); // well before the deadline
      expect(await one.call(request('spin', apps.spin, 'quick', undefined, v, { signal: AbortSignal.abort() }))).toMatchObject({ kind: 'Aborted' });
      // the abandoned runaway keeps its worker until its deadline, which replaces it as any runaway
      expect(output(await one.call(request('spin', apps.spin, 'quick', undefined, v)))).toBe('done');
      expect(one.stats).toMatchObject({ abandoned: 1, replaced: { deadline: 1, error: 0, exit: 0 } });
    } finally {
      await one.stop();
    }
  });

  it('a caller going away mid-call does not kill the worker: the call finishes there, its answer dropped, and the worker serves the next call (issue #22)', async () => {
    const one = new WasmRuntime({ poolSize: 1, deadlineMs: 5_000 });
    await one.start({ warm: true });
    try {
      const slow = newViews();
      slow.state.put('k', 'v');
      let reads = 0;
      const get = slow.state.get.bind(slow.state);
      slow.state.get = async (key) => {
        reads++;
        await new Promise((r) => setTimeout(r, 300));
        return get(key);
      };
      const gone = new AbortController();
      const call = one.call(request('hostcalls', apps.hostcalls, 'read', { key: 'k' }, slow, { signal: gone.signal }));
      setTimeout(() => gone.abort(), 100);
      expect(await call).toMatchObject({ ok: false, kind: 'Aborted' });
      expect(one.workers).toBe(1);
      const fine = newViews();
      fine.state.put('k', 'w');
      expect(output(await one.call(request('hostcalls', apps.hostcalls, 'read', { key: 'k' }, fine)))).toBe('w');
      expect(reads).toBe(1); // the abandoned call's read was answered, and the call finished on its worker
      expect(one.stats).toMatchObject({ abandoned: 1, calls: 2, replaced: { deadline: 0, error: 0, exit: 0 } });
      expect(one.workers).toBe(1);
    } finally {
      await one.stop();
    }
  });

  it('runs calls in parallel across the pool', async () => {
    const results: CallResult[] = await Promise.all(
      Array.from({ length: 6 }, () => rt.call(request('spin', apps.spin, 'quick', undefined, newViews()))),
    );
    expect(results.map((r) => r.ok && text(r.output))).toEqual(Array(6).fill('"done"'));
  });

  it('refuses calls after stop', async () => {
    const r = new WasmRuntime({ poolSize: 1 });
    await r.start();
    await r.stop();
    await expect(r.call(request('spin', apps.spin, 'quick', undefined, newViews()))).rejects.toThrow(/before start\(\) or after stop\(\)/);
  });
});

describe('memory limit', () => {
  it('memory.grow past 64 MiB fails inside the guest (it returns -1)', async () => {
    expect(output(await rt.call(request('spin', apps.spin, 'grow_past_limit', { pages: 2000 }, newViews())))).toMatchObject({ grow: -1 });
    const ok = output(await rt.call(request('spin', apps.spin, 'grow_past_limit', { pages: 10 }, newViews()))) as { grow: number; pages: number };
    expect(ok.grow).toBeGreaterThan(0);
  });

  it('a guest allocating without bound traps instead of taking the node’s memory', async () => {
    const r = await rt.call(request('spin', apps.spin, 'allocate_forever', undefined, newViews()));
    expect(r.ok).toBe(false);
    expect(['WasmTrap', 'Panic']).toContain((r as { kind: string }).kind);
  });
});

describe('isolation between contexts (issue #17 finding 8)', () => {
  const ctxA = new Uint8Array(32).fill(0xaa);
  const ctxB = new Uint8Array(32).fill(0xbb);

  it('a runaway context cannot hold every worker: another context’s call finishes first', async () => {
    const two = new WasmRuntime({ poolSize: 2, deadlineMs: 3_000 });
    await two.start();
    try {
      const stop = new AbortController();
      const spins = [0, 1].map(() => two.call(request('spin', apps.spin, 'spin', undefined, newViews(), { contextId: ctxA, signal: stop.signal })));
      await new Promise((r) => setTimeout(r, 50));
      const quick = two.call(request('spin', apps.spin, 'quick', undefined, newViews(), { contextId: ctxB }));
      const first = await Promise.race([quick.then(() => 'other context'), ...spins.map((p) => p.then(() => 'runaway'))]);
      expect(first).toBe('other context');
      expect(output(await quick)).toBe('done');
      stop.abort();
      await Promise.all(spins);
    } finally {
      await two.stop();
    }
  });

  it('bounds the calls waiting for a worker, per context and in all: 503 with Retry-After past the bound', async () => {
    const one = new WasmRuntime({ poolSize: 1, queueLimit: 4, deadlineMs: 5_000 });
    await one.start({ warm: true }); // the worker is up: the first call runs at once rather than waiting for it
    try {
      const stop = new AbortController();
      const call = (ctx: Uint8Array) => one.call(request('spin', apps.spin, 'spin', undefined, newViews(), { contextId: ctx, signal: stop.signal }));
      const running = call(ctxA);
      await new Promise((r) => setTimeout(r, 50));
      const waitingA = call(ctxA); // context A's one waiting place (4 / 4)
      const refused = await call(ctxA).then(() => undefined, (e: unknown) => e);
      expect(refused).toBeInstanceOf(HearthError);
      expect((refused as HearthError).kind).toBe('unavailable');
      expect((refused as HearthError).extra.retryAfterSecs).toBeGreaterThan(0);
      const others = [2, 3, 4].map((n) => call(new Uint8Array(32).fill(n)));
      const full = await call(ctxB).then(() => undefined, (e: unknown) => e);
      expect((full as HearthError).kind).toBe('unavailable');
      stop.abort();
      await Promise.all([running, waitingA, ...others]);
    } finally {
      await one.stop();
    }
  });
});

describe('waiting for a worker', () => {
  it('is bounded by the call’s deadline and a grace: then the call is refused with 503 and Retry-After (it did not run)', async () => {
    const one = new WasmRuntime({ poolSize: 1, deadlineMs: 5_000 });
    await one.start({ warm: true });
    try {
      const stop = new AbortController();
      const busy = one.call(request('spin', apps.spin, 'spin', undefined, newViews(), { signal: stop.signal }));
      await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      const waited = await one.call(request('spin', apps.spin, 'quick', undefined, newViews(), { deadlineMs: 100, contextId: new Uint8Array(32).fill(9) })).catch((e: unknown) => e);
      // issue #37 item 3: never a 200 carrying a failed call
      expect(waited).toBeInstanceOf(HearthError);
      expect(waited).toMatchObject({ kind: 'unavailable', message: 'No worker was free within 1100 ms (every worker is busy: 1 workers, 0 calls waiting); retry later' });
      expect((waited as HearthError).extra.retryAfterSecs).toBeGreaterThan(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      stop.abort();
      await busy;
    } finally {
      await one.stop();
    }
  });
});

describe('workers started on demand (issue #14)', () => {
  it('holds no worker until a call needs one, then no more than the calls need', async () => {
    const lazy = new WasmRuntime({ poolSize: 2 });
    await lazy.start();
    try {
      expect(lazy.workers).toBe(0);
      expect(output(await lazy.call(request('spin', apps.spin, 'quick', undefined, newViews())))).toBe('done');
      expect(lazy.workers).toBe(1);
      await Promise.all([0, 1, 2].map(() => lazy.call(request('spin', apps.spin, 'quick', undefined, newViews(), { contextId: new Uint8Array(32).fill(7) }))));
      expect(lazy.workers).toBeLessThanOrEqual(2);
    } finally {
      await lazy.stop();
    }
  });
});

describe('prepare: a module ready before its first call (issue #22)', () => {
  it('compiles the module, starts a worker and makes its instance, so the first call creates none', async () => {
    const lazy = new WasmRuntime({ poolSize: 2 });
    await lazy.start();
    try {
      let loads = 0;
      const wasm = async () => {
        loads++;
        return apps.kv;
      };
      await lazy.prepare({ applicationId: 'prepared', wasm });
      expect(lazy.workers).toBe(1);
      expect(lazy.cachedModules).toBe(1);
      const v = newViews();
      const init = await lazy.call({ ...request('prepared', apps.kv, 'init', undefined, v), wasm });
      expect(init.ok).toBe(true);
      expect(lazy.stats.instancesCreated).toBe(0); // the worker made its instance when it got the module
      expect(loads).toBe(1);
      // a module that does not compile is left for its first call to report
      await lazy.prepare({ applicationId: 'broken', wasm: async () => new Uint8Array([1, 2, 3]) });
      expect(await lazy.call(request('broken', new Uint8Array([1, 2, 3]), 'init', undefined, newViews()))).toMatchObject({ ok: false, kind: 'CompileError' });
    } finally {
      await lazy.stop();
    }
  });
});

describe('reads kept in the worker (issue #14)', () => {
  it('answers reads of a context from the worker under the same state version, and asks again under a new one', async () => {
    const one = new WasmRuntime({ poolSize: 1 });
    await one.start();
    try {
      const v = newViews();
      const call = (method: string, args: unknown, extra: Partial<CallRequest> = {}) => one.call(request('kv', apps.kv, method, args, v, extra));
      const init = await call('init', undefined);
      v.state.apply((init as CallSuccess).writes);
      const set = await call('set', { key: 'a', value: '1' });
      v.state.apply((set as CallSuccess).writes);

      v.state.reads = 0;
      expect(output(await call('get', { key: 'a' }, { stateVersion: 7 }))).toBe('1');
      const first = v.state.reads;
      expect(first).toBeGreaterThan(0);
      expect(output(await call('get', { key: 'a' }, { stateVersion: 7 }))).toBe('1');
      expect(output(await call('get', { key: 'nope' }, { stateVersion: 7 }))).toBeNull(); // the key list is kept; the missing item is asked once
      const missing = v.state.reads - first;
      expect(output(await call('get', { key: 'nope' }, { stateVersion: 7 }))).toBeNull();
      expect(v.state.reads).toBe(first + missing); // nothing asked: both kept, the absent key too

      // the state changes: the main thread names a new version and the worker asks again
      const upd = await call('set', { key: 'a', value: '2' }, { stateVersion: 7 });
      v.state.apply((upd as CallSuccess).writes);
      expect(output(await call('get', { key: 'a' }, { stateVersion: 8 }))).toBe('2');
      expect(v.state.reads).toBeGreaterThan(first + missing);
      // without a version nothing is kept
      const before = v.state.reads;
      await call('get', { key: 'a' });
      await call('get', { key: 'a' });
      expect(v.state.reads - before).toBe(2 * first);
    } finally {
      await one.stop();
    }
  });
});
