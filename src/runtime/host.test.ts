/**
 * Every host function, run for real: the `hostcalls` test app (test/apps/hostcalls.ts) calls each
 * one through the worker pool, the way a Rust-SDK guest does.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import type { RuntimeBlobs } from './blob-access.ts';
import type { CallFailure, CallRequest, CallResult, CallSuccess } from './call-types.ts';
import { HOST_SIGNATURES } from './signatures.ts';
import { WasmRuntime } from './runtime.ts';
import { bytes, MemoryView, newViews, output, request, type Views } from './test-support.ts';
import { rawPublicKeyBytes } from '../crypto/keys.ts';

const MiB = 1024 * 1024;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const text = (b: Uint8Array | null | undefined) => (b ? new TextDecoder().decode(b) : b);
const CTX = bytes(32, 0xc1);

class FakeBlobs implements RuntimeBlobs {
  readonly local = new Map<string, Uint8Array>();
  readonly peers = new Map<string, Uint8Array>();
  async open(id: Uint8Array, contextId?: Uint8Array) {
    let data = this.local.get(hex(id));
    if (!data && contextId) {
      data = this.peers.get(hex(id));
      if (data) this.local.set(hex(id), data);
    }
    if (!data) return null;
    const d = data;
    // served in 5-byte pieces so reads must assemble and split chunks
    return (async function* () {
      for (let i = 0; i < d.length; i += 5) yield d.subarray(i, i + 5);
    })();
  }
  async has(id: Uint8Array) {
    return this.local.has(hex(id));
  }
  async put(data: Uint8Array) {
    const id = bytes(32, this.local.size + 1);
    this.local.set(hex(id), data.slice());
    return id;
  }
}

let wasm: Uint8Array;
let rt: WasmRuntime;
let tight: WasmRuntime;
let noBlobs: WasmRuntime;
const blobs = new FakeBlobs();

beforeAll(async () => {
  wasm = await buildTestApp('hostcalls');
  rt = new WasmRuntime({ blobs });
  tight = new WasmRuntime({ poolSize: 1, limits: { maxStorageWriteCount: 5, maxStorageWriteBytes: 100, maxRegisterSize: 64, maxModuleSize: 64 * 1024 } });
  noBlobs = new WasmRuntime({ poolSize: 1 });
  await Promise.all([rt.start(), tight.start(), noBlobs.start()]);
}, 240_000);

afterAll(async () => {
  await Promise.all([rt?.stop(), tight?.stop(), noBlobs?.stop()]);
});

async function call(method: string, args?: unknown, views: Views = newViews(), extra: Partial<CallRequest> = {}, runtime = rt): Promise<CallResult> {
  return runtime.call(request('hostcalls', wasm, method, args, views, extra));
}
async function ok(method: string, args?: unknown, views?: Views, extra?: Partial<CallRequest>): Promise<CallSuccess> {
  const r = await call(method, args, views, extra);
  if (!r.ok) throw new Error(`${method} failed: ${r.kind}: ${r.message}`);
  return r;
}
async function fails(method: string, args?: unknown, views?: Views, extra?: Partial<CallRequest>, runtime = rt): Promise<CallFailure> {
  const r = await call(method, args, views, extra, runtime);
  if (r.ok) throw new Error(`${method} unexpectedly succeeded`);
  // a failed call reports no writes, events or commit: the caller has nothing to persist
  expect(Object.keys(r).sort()).toEqual(['kind', 'logs', 'message', 'ok']);
  return r;
}

describe('imports', () => {
  it('an app importing every supported host function instantiates and runs', async () => {
    const names = WebAssembly.Module.imports(new WebAssembly.Module(wasm as Uint8Array<ArrayBuffer>)).map((i) => i.name);
    expect(new Set(names)).toEqual(new Set(Object.keys(HOST_SIGNATURES)));
    expect(output(await ok('nothing'))).toBeUndefined();
  });

  it('calls __calimero_register_merge before the method', async () => {
    expect(output(await ok('merge_registered'))).toBe(true);
  });
});

describe('registers, input and value_return', () => {
  it('input hands the guest the call input; value_return Ok is the output', async () => {
    expect(output(await ok('echo', { a: 1 }))).toBe('{"a":1}');
    const r = await ok('nothing');
    expect(r.output).toBeNull();
  });

  it('register_len answers u64::MAX for an unset register; read_register answers 0 on a size mismatch', async () => {
    const input = { pad: 'xyz' };
    expect(output(await ok('registers', input))).toEqual({
      unset: '18446744073709551615',
      len: JSON.stringify(input).length,
      wrongSize: 0,
    });
  });

  it('at most 100 registers, each within the register size limit', async () => {
    expect((await ok('many_registers', { n: 99 })).ok).toBe(true); // + the input register = 100
    expect(await fails('many_registers', { n: 100 })).toMatchObject({ kind: 'HostError', message: 'invalid memory access' });
    // tight's registers hold at most 64 bytes: an input that large cannot be handed over
    expect((await call('echo', { s: 'x'.repeat(40) }, newViews(), {}, tight)).ok).toBe(true);
    expect((await fails('echo', { s: 'x'.repeat(60) }, newViews(), {}, tight)).message).toBe('invalid memory access');
  });

  it('reading an unset register traps', async () => {
    expect(await fails('read_unset_register')).toMatchObject({ kind: 'HostError', message: 'invalid register id: 777' });
  });

  it('value_return refuses a tag other than Ok/Err and a value past 16 MiB', async () => {
    expect((await fails('bad_return_tag')).message).toBe('deserialization error');
    expect((await fails('big_return', { size: 16 * MiB + 1 })).message).toBe(
      `return value too large (size: ${16 * MiB + 1}, max: ${16 * MiB})`,
    );
  });

  it('a descriptor pointing outside guest memory is an invalid memory access', async () => {
    expect(await fails('bad_pointer')).toMatchObject({ kind: 'HostError', message: 'invalid memory access' });
  });
});

describe('identity', () => {
  it('context_id, executor_id (the account, as the reference shims it), account_id, device_id, xcall_origin', async () => {
    expect(output(await ok('identity'))).toEqual({
      context: 'c1'.repeat(32),
      executor: 'a1'.repeat(32),
      account: 'a1'.repeat(32),
      device: 'd1'.repeat(32),
      origin: null,
    });
    const viaXcall = output(await ok('identity', undefined, newViews(), { xcallOrigin: bytes(32, 0xee) }));
    expect(viaXcall).toMatchObject({ origin: 'ee'.repeat(32) });
  });
});

describe('logs', () => {
  it('log_utf8 collects lines in order', async () => {
    expect((await ok('logs', { n: 3 })).logs).toEqual(['line 0', 'line 1', 'line 2']);
  });

  it('at most 1024 lines of 16 KiB each, valid UTF-8', async () => {
    const over = await fails('logs', { n: 1025 });
    expect(over).toMatchObject({ kind: 'HostError', message: 'logs overflow' });
    expect(over.logs).toHaveLength(1024);
    expect((await ok('long_log', { size: 16 * 1024 })).logs[0]).toHaveLength(16 * 1024);
    expect((await fails('long_log', { size: 16 * 1024 + 1 })).message).toBe('log size overflow');
    expect((await fails('bad_utf8_log')).message).toBe('invalid UTF-8 string');
  });
});

describe('events', () => {
  it('emit records kind and data with no handler; emit_with_handler names one', async () => {
    const r = await ok('events', { n: 2 });
    expect(r.events.map((e) => [e.kind, text(e.data), e.handler])).toEqual([
      ['Tick', '{"i":0}', null],
      ['Tick', '{"i":1}', null],
    ]);
    const h = await ok('emit_handler', { handler: 'on_ping' });
    expect(h.events[0]).toMatchObject({ kind: 'Ping', handler: 'on_ping' });
  });

  it('at most 100 events, kinds of 100 bytes, data of 16 KiB, handler names of 256 bytes', async () => {
    expect((await ok('events', { n: 100 })).events).toHaveLength(100);
    expect((await fails('events', { n: 101 })).message).toBe('events overflow');
    expect((await ok('big_event', { kind: 100, data: 16 * 1024 })).events).toHaveLength(1);
    expect((await fails('big_event', { kind: 101 })).message).toBe('event kind size overflow');
    expect((await fails('big_event', { data: 16 * 1024 + 1 })).message).toBe('event data size overflow');
    expect((await fails('emit_handler', { handler: 'h'.repeat(257) })).message).toBe('event handler name too large (size: 257, max: 256)');
  });
});

describe('storage', () => {
  it('storage_read/write/remove against the view, old values through the register', async () => {
    const views = newViews();
    views.state.put('k', 'old');
    expect(output(await ok('read', { key: 'k' }, views))).toBe('old');
    expect(output(await ok('read', { key: 'missing' }, views))).toBeNull();
    const w = await ok('write', { key: 'k', value: 'new' }, views);
    expect(output(w)).toBe('old');
    expect(w.writes.map(([k, v]) => [text(k), text(v)])).toEqual([['k', 'new']]);
    expect(output(await ok('write', { key: 'fresh', value: 'x' }, views))).toBeNull();
    const rm = await ok('remove', { key: 'k' }, views);
    expect(output(rm)).toBe('old');
    expect(rm.writes.map(([k, v]) => [text(k), v])).toEqual([['k', null]]);
    const none = await ok('remove', { key: 'missing' }, views);
    expect([output(none), none.writes]).toEqual([null, []]);
  });

  it('reads see the call’s own writes; writes come back in order of last write', async () => {
    const views = newViews();
    views.state.put('gone', 'here');
    const r = await ok('read_your_writes', undefined, views);
    expect(output(r)).toEqual({ ryw: 'second', gone: null });
    expect(r.writes.map(([k, v]) => [text(k), v && text(v)])).toEqual([
      ['ryw', 'second'],
      ['gone', null],
    ]);
    // nothing was written to the view itself: the caller persists
    expect(views.state.text('ryw')).toBeUndefined();
  });

  it('keys up to 1 MiB, values up to 10 MiB (the guest grows its memory to build them)', async () => {
    const big = await ok('write_sized', { key: 'big', size: 10 * MiB });
    expect(big.writes[0][1]).toHaveLength(10 * MiB);
    expect((await fails('write_sized', { key: 'big', size: 10 * MiB + 1 })).message).toBe('value length overflow');
    expect((await fails('write_big_key', { size: MiB + 1 })).message).toBe('key length overflow');
  });

  it('the per-call write budget (count and bytes) traps', async () => {
    expect((await call('many_writes', { n: 5 }, newViews(), {}, tight)).ok).toBe(true);
    expect((await fails('many_writes', { n: 6 }, newViews(), {}, tight)).message).toBe('storage write count budget exceeded (max: 5)');
    expect((await fails('write_sized', { key: 'k', size: 200 }, newViews(), {}, tight)).message).toBe(
      'storage write byte budget exceeded (attempted: 201, max: 100)',
    );
  });
});

describe('failures discard everything', () => {
  it('a trap after writes and events reports no writes and no events', async () => {
    expect(await fails('write_then_trap')).toMatchObject({ kind: 'WasmTrap', message: 'unreachable code reached' });
  });

  it('an application error (value_return Err) reports no writes, events or commit, with the Debug text', async () => {
    const r = await fails('write_then_app_error');
    const bytesText = Array.from(new TextEncoder().encode('{"kind":"Nope","data":"no"}')).join(', ');
    expect(r).toMatchObject({ kind: 'AppError', message: `the method call returned an error: [${bytesText}]` });
  });

  it('panics display as the reference: message and location', async () => {
    expect(await fails('write_then_panic')).toMatchObject({ kind: 'Panic', message: 'guest panicked: it broke at src/lib.rs:42:7' });
    expect((await fails('panic_plain')).message).toBe('guest panicked: explicit panic at src/plain.rs:9:3');
    const a = await fails('assert_fails', { x: 0 });
    expect(a.kind).toBe('Panic');
    expect(a.message).toMatch(/^guest panicked: x must be 1 at .*hostcalls\.ts:\d+:\d+$/);
  });

  it('wasm traps map to the reference’s WasmTrap texts', async () => {
    expect(await fails('divide', { d: 0 })).toMatchObject({ kind: 'WasmTrap', message: 'illegal arithmetic operation' });
    expect(await fails('deep')).toMatchObject({ kind: 'WasmTrap', message: 'stack overflow' });
  });
});

describe('commit', () => {
  it('commit sets the root hash and artifact; twice traps; the root must be 32 bytes', async () => {
    const r = await ok('commit_once');
    expect(hex(r.commit!.rootHash)).toBe('ab'.repeat(32));
    expect(text(r.commit!.artifact)).toBe('delta');
    expect((await fails('commit_twice')).message).toBe('commit called more than once');
    expect((await fails('commit_bad_root')).message).toBe('invalid memory access');
  });

  it('read-only calls drop writes and refuse commit', async () => {
    const views = newViews();
    views.state.put('k', 'old');
    // the old value still comes back, but the write is dropped, and a later read does not see it
    const w = await ok('write', { key: 'k', value: 'v' }, views, { readOnly: true });
    expect([output(w), w.writes]).toEqual(['old', []]);
    const rm = await ok('remove', { key: 'k' }, views, { readOnly: true });
    expect([output(rm), rm.writes]).toEqual(['old', []]);
    expect(await fails('commit_once', undefined, views, { readOnly: true })).toMatchObject({
      kind: 'HostError',
      message: 'commit refused: the method is read-only (a view cannot change state)',
    });
  });
});

describe('utility', () => {
  it('time_now writes wall-clock nanoseconds into an 8-byte buffer, and refuses any other size', async () => {
    const before = BigInt(Date.now()) * 1_000_000n;
    const t = BigInt(output(await ok('time')) as string);
    const after = BigInt(Date.now() + 1) * 1_000_000n;
    expect(t >= before && t <= after).toBe(true);
    expect((await fails('time_bad')).message).toBe('invalid memory access');
  });

  it('random_bytes fills the buffer from a CSPRNG', async () => {
    const a = output(await ok('random', { n: 32 })) as string;
    const b = output(await ok('random', { n: 32 })) as string;
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
  });

  it('ed25519_verify answers 1 for a valid signature, 0 otherwise; wrong sizes trap', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const pk = rawPublicKeyBytes(publicKey).toString('hex');
    const sig = sign(null, Buffer.from('hello'), privateKey).toString('hex');
    expect(output(await ok('verify', { sig, pk, msg: 'hello' }))).toBe(1);
    expect(output(await ok('verify', { sig, pk, msg: 'hellO' }))).toBe(0);
    expect((await fails('verify', { sig: sig.slice(2), pk, msg: 'hello' })).message).toBe('invalid memory access');
    // y = 2 decompresses to no curve point: the key itself is refused, as ed25519-dalek does
    expect((await fails('verify', { sig, pk: '02' + '00'.repeat(31), msg: 'hello' })).message).toBe('incorrect ed25519 public key');
  });

  it('fetch is blocked as in the reference: status 1 and the reason in the register', async () => {
    expect(output(await ok('http'))).toEqual({ status: 1, body: "Host function 'fetch' is temporarily disabled." });
  });

  it('search_query and the TEE-only functions refuse on a node without them; tee_origin is 0', async () => {
    expect((await fails('search')).message).toBe('search_query is only available in a view (#[app::view]) on a node with search');
    expect(output(await ok('tee'))).toBe(0);
    expect((await fails('tee_random')).message).toBe('tee_random_bytes is only available in a TEE-triggered execution');
    expect((await fails('tee_keys')).message).toBe('tee_authority_keys is only available in a TEE-triggered execution');
  });

  it('emit_migration_witness is carried on the outcome', async () => {
    expect(text((await ok('migration_witness')).migrationWitness)).toBe('witness');
  });

  it('memory growth: the host reads a value the guest placed in freshly grown pages', async () => {
    const r = await ok('grow_and_write', { pages: 50 });
    const { before, after } = output(r) as { before: number; after: number };
    expect(after).toBe(before + 50);
    expect(r.writes.map(([k, v]) => [text(k), text(v)])).toEqual([['grown', 'z'.repeat(16)]]);
  });
});

describe('private storage', () => {
  it('private_storage_* read the private view and report privateWrites apart from writes', async () => {
    const r = await ok('private_ops', { value: 's1' });
    expect(output(r)).toEqual({ write: 1, read: 's1', removed: null, after: 's1' });
    expect(r.privateWrites.map(([k, v]) => [text(k), text(v)])).toEqual([['secret', 's1']]);
    expect(r.writes).toEqual([]);
    const rm = await ok('private_ops', { value: 's2', remove: 'yes' });
    expect(output(rm)).toEqual({ write: 1, read: 's2', removed: 's2', after: null });
    expect(rm.privateWrites.map(([k, v]) => [text(k), v])).toEqual([['secret', null]]);
    const views = newViews();
    views.privateState.put('key', 'local');
    expect(output(await ok('private_read', { key: 'key' }, views))).toBe('local');
    expect(output(await ok('read', { key: 'key' }, views))).toBeNull();
  });
});

describe('ordered index', () => {
  const indexed = () => {
    const views = newViews();
    for (const k of ['a/1', 'a/2', 'b/1', 'b/2', 'c/1']) views.index.put(k, `v-${k}`);
    return views;
  };
  const keys = (pairs: unknown) => (pairs as Array<[string, string]>).map(([k]) => k);

  it('storage_index_scan over [lo, hi) with offset and an n+1-encoded limit', async () => {
    const v = indexed();
    expect(output(await ok('index_scan', { lo: 'a', hi: 'c', offset: 1, limit: 3 }, v))).toEqual([
      ['a/2', 'v-a/2'],
      ['b/1', 'v-b/1'],
    ]);
    expect(keys(output(await ok('index_scan', { lo: 'a', hi: 'c', offset: 1, limit: 0 }, v)))).toEqual(['a/2', 'b/1', 'b/2']);
    expect(keys(output(await ok('index_scan', { lo: 'b', hi: '', offset: 0, limit: 0 }, v)))).toEqual(['b/1', 'b/2', 'c/1']);
  });

  it('storage_index_last answers the largest entry in range', async () => {
    expect(output(await ok('index_last', { lo: 'a', hi: 'c' }, indexed()))).toEqual([['b/2', 'v-b/2']]);
    expect(output(await ok('index_last', { lo: 'x', hi: 'y' }, indexed()))).toEqual([]);
  });

  it('set, remove and remove_prefix are seen by later scans and come back as indexWrites', async () => {
    const r = await ok('index_edit', { remove: 'a/1', prefix: 'c/' }, indexed());
    expect(output(r)).toEqual([
      ['a/2', 'v-a/2'],
      ['b/1', 'v-b/1'],
      ['b/2', 'new'],
    ]);
    expect(r.indexWrites.map(([k, v]) => [text(k), v && text(v)])).toEqual([
      ['b/2', 'new'],
      ['a/1', null],
      ['c/1', null],
    ]);
  });

  it('index writes in a read-only call answer 0 (not persisted)', async () => {
    const r = await ok('index_set', { keys: 'x,y' }, newViews(), { readOnly: true });
    expect([output(r), r.indexWrites]).toEqual([0, []]);
  });

  it('storage_index_meta_* use the index-meta view when given, and answer 0 without one', async () => {
    expect(output(await ok('index_meta'))).toEqual({ set: 0, got: null, cleared: 0, after: null });
    const r = await ok('index_meta', undefined, newViews(), { indexMeta: new MemoryView() });
    expect(output(r)).toEqual({ set: 1, got: 'valid', cleared: 1, after: null });
    expect(r.indexMetaWrites!.map(([k, v]) => [text(k), v])).toEqual([['coll', null]]);
  });
});

describe('blobs', () => {
  it('blob_open + blob_read stream a stored blob in the guest’s chunk size', async () => {
    const content = 'hello blob world, longer than a chunk';
    const id = bytes(32, 0x42);
    blobs.local.set(hex(id), new TextEncoder().encode(content));
    expect(output(await ok('blob_read', { id: hex(id), chunk: 7 }))).toEqual({ text: content, reads: Math.ceil(content.length / 7), id: hex(id) });
    expect(output(await ok('blob_read', { id: 'ee'.repeat(32) }))).toEqual({ text: '', reads: 0, id: 'ee'.repeat(32) });
  });

  it('blob_create + blob_write + blob_close store a blob and hand back its id', async () => {
    const r = output(await ok('blob_write', { data: 'ab|cd|ef' })) as { id: string; written: number };
    expect(r.written).toBe(6);
    expect(text(blobs.local.get(r.id))).toBe('abcdef');
  });

  it('blob_announce_to_context and blob_open_in_context act only for the executing context', async () => {
    const held = bytes(32, 0x43);
    blobs.local.set(hex(held), new Uint8Array([1]));
    expect(output(await ok('blob_announce', { id: hex(held), ctx: hex(CTX) }))).toBe(1);
    expect(output(await ok('blob_announce', { id: 'ab'.repeat(32), ctx: hex(CTX) }))).toBe(0);
    expect((await fails('blob_announce', { id: hex(held), ctx: 'ff'.repeat(32) })).message).toBe(
      'context does not have permission to access this blob handle',
    );
    const onPeer = bytes(32, 0x44);
    blobs.peers.set(hex(onPeer), new Uint8Array([2]));
    expect(output(await ok('blob_in_context', { id: hex(onPeer), ctx: hex(CTX) }))).toBeGreaterThan(0);
    expect(output(await ok('blob_in_context', { id: 'cd'.repeat(32), ctx: hex(CTX) }))).toBe(0);
  });

  it('a bad fd traps; without blob access every blob function traps as the reference without a node client', async () => {
    expect((await fails('blob_bad_fd')).message).toBe('invalid blob handle');
    expect((await fails('blob_write', { data: 'x' }, newViews(), {}, noBlobs)).message).toBe(
      'blob operations not supported (NodeClient not available)',
    );
  });
});

describe('xcall', () => {
  it('xcall collects calls for the caller, at most 8, with size limits', async () => {
    const ctx = 'ee'.repeat(32);
    const r = await ok('xcalls', { n: 2, ctx, fn: 'pong' });
    expect(r.xcalls.map((x) => [hex(x.contextId), x.function, text(x.params)])).toEqual([
      [ctx, 'pong', '{"i":0}'],
      [ctx, 'pong', '{"i":1}'],
    ]);
    expect((await fails('xcalls', { n: 9, ctx, fn: 'pong' })).message).toBe('xcalls overflow');
    expect((await fails('xcall_big', { ctx, fn: 101 })).message).toBe('xcall function size overflow');
    expect((await fails('xcall_big', { ctx, params: 16 * 1024 + 1 })).message).toBe('xcall params size overflow');
    expect((await fails('xcalls', { n: 1, ctx: 'ee'.repeat(31), fn: 'pong' })).message).toBe('invalid memory access');
  });
});
