/**
 * Instance reuse for guests whose memory grows (issue #22; instances.ts, wasm-code.ts): a kept
 * instance shows every call exactly what a fresh one would — the memory's contents and size, the
 * globals, the table — whatever earlier calls did (grow, write past the snapshot, change a global
 * or a table entry, trap halfway); and the real-app-shaped kv_store and the bench's kv_flat give
 * identical results, call for call, on a kept instance and on fresh ones.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, wat } from '../../test/helpers/wasm-apps.ts';
import { compileGuest, type CompiledGuest } from './compile.ts';
import type { CallResult } from './call-types.ts';
import { execute } from './execute.ts';
import type { SyncBackend } from './host-state.ts';
import { InstancePool } from './instances.ts';
import { DEFAULT_LIMITS } from './limits.ts';
import { MemoryView } from './test-support.ts';

const PROBE = `(module
  (import "env" "value_return" (func $ret (param i64)))
  (memory (export "memory") 1)
  (global $g (mut i32) (i32.const 0))
  (table $t 2 funcref)
  (elem (i32.const 0) $seven $seven)
  (type $r (func (result i32)))
  (func $seven (result i32) (i32.const 7))
  (func $nine (result i32) (i32.const 9))
  (func $sum (param $from i32) (param $to i32) (result i32) (local $s i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $from) (local.get $to)))
      (local.set $s (i32.add (local.get $s) (i32.load8_u (local.get $from))))
      (local.set $from (i32.add (local.get $from) (i32.const 1)))
      (br $l)))
    (local.get $s))
  (func $answer (param $ptr i32) (param $len i32)
    (i64.store (i32.const 2200) (i64.const 0))
    (i64.store (i32.const 2208) (i64.extend_i32_u (local.get $ptr)))
    (i64.store (i32.const 2216) (i64.extend_i32_u (local.get $len)))
    (call $ret (i64.const 2200)))
  ;; [memory.size, the global, table[0](), table[1](), table.size, a byte of page 0, grow(3)'s answer, the grown pages' byte sum]
  (func (export "observe") (local $old i32)
    (i32.store (i32.const 2048) (memory.size))
    (i32.store (i32.const 2052) (global.get $g))
    (i32.store (i32.const 2056) (call_indirect (type $r) (i32.const 0)))
    (i32.store (i32.const 2060) (call_indirect (type $r) (i32.const 1)))
    (i32.store (i32.const 2064) (table.size $t))
    (i32.store (i32.const 2068) (i32.load8_u (i32.const 1000)))
    (local.set $old (memory.grow (i32.const 3)))
    (i32.store (i32.const 2072) (local.get $old))
    (i32.store (i32.const 2076) (call $sum (i32.mul (local.get $old) (i32.const 65536)) (i32.mul (memory.size) (i32.const 65536))))
    (call $answer (i32.const 2048) (i32.const 32)))
  (func $dirty
    (global.set $g (i32.const 42))
    (table.set $t (i32.const 0) (ref.func $nine))
    (i32.store8 (i32.const 1000) (i32.const 0xab))
    (memory.fill (i32.mul (memory.grow (i32.const 4)) (i32.const 65536)) (i32.const 0xcd) (i32.const 262144)))
  (func (export "dirty") (call $dirty))
  (func (export "dirty_trap") (call $dirty) (unreachable))
  ;; a store just past the size the guest sees
  (func (export "write_past") (i32.store8 (i32.mul (memory.size) (i32.const 65536)) (i32.const 0xef)))
  ;; asks the host to read just past the size the guest sees
  (func (export "return_past") (call $answer (i32.mul (memory.size) (i32.const 65536)) (i32.const 4)))
  (func (export "grow_table") (drop (table.grow $t (ref.func $nine) (i32.const 1))))
)`;

const req = (method: string, input: unknown = undefined, executor = 0xa1) => ({
  method,
  input: new TextEncoder().encode(input === undefined ? '' : JSON.stringify(input)),
  contextId: new Uint8Array(32).fill(0xc1),
  executorId: new Uint8Array(32).fill(executor),
  deviceId: new Uint8Array(32).fill(0xd1),
  readOnly: false,
});
const none = { hasIndexMeta: false, hasBlobs: false, get: () => undefined, range: () => [] } as unknown as SyncBackend;
const words = (r: CallResult) => (r.ok && r.output ? Array.from(new Int32Array(r.output.slice().buffer)) : r);

function backendOf(view: MemoryView): SyncBackend {
  return { hasIndexMeta: false, hasBlobs: false, get: (space: string, key: Uint8Array) => (space === 'state' ? view.entries.get(Buffer.from(key).toString('hex'))?.[1] : undefined), range: () => [] } as unknown as SyncBackend;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a kept instance whose memory grew', () => {
  let probe: CompiledGuest;
  beforeAll(async () => {
    probe = await compileGuest(wat(PROBE), DEFAULT_LIMITS);
  });

  it('shows no call anything an earlier one left: memory past the snapshot, its size, globals, table entries', () => {
    expect(probe.reuse?.memoryPages).toBeDefined();
    expect(probe.reuse?.tables).toHaveLength(1); // table.set is in the code: the table is restored
    const fresh = (m: string) => execute(probe.module, probe.exportTypes, req(m), none, DEFAULT_LIMITS);
    const expected = words(fresh('observe'));
    expect(expected).toEqual([1, 0, 7, 7, 2, 0, 1, 0]);
    const pool = new InstancePool(probe.module, probe.reuse);
    const run = (m: string) => execute(pool, probe.exportTypes, req(m), none, DEFAULT_LIMITS);
    expect(words(run('observe'))).toEqual(expected);
    expect(run('dirty')).toMatchObject({ ok: true });
    expect(words(run('observe'))).toEqual(expected);
    expect(run('dirty_trap')).toMatchObject({ ok: false, kind: 'WasmTrap' });
    expect(words(run('observe'))).toEqual(expected);
    expect(run('observe')).toEqual(fresh('observe'));
    expect(pool.created).toBe(1);
    expect(pool.reused).toBe(6);
  });

  it('the host reads and writes only the memory the guest sees; a store past it in the guest is wiped before the next call', () => {
    const pool = new InstancePool(probe.module, probe.reuse);
    const run = (m: string) => execute(pool, probe.exportTypes, req(m), none, DEFAULT_LIMITS);
    run('dirty'); // the real memory is 5 pages from now on, the guest sees 1 at each call's start
    const fresh = execute(probe.module, probe.exportTypes, req('return_past'), none, DEFAULT_LIMITS);
    expect(fresh).toMatchObject({ ok: false, kind: 'HostError' });
    expect(run('return_past')).toEqual(fresh);
    // the one difference from a fresh instance (docs/runtime.md "Instance reuse"): a store past the
    // size the guest sees but within the real memory does not trap; nothing of it survives the call
    expect(execute(probe.module, probe.exportTypes, req('write_past'), none, DEFAULT_LIMITS)).toMatchObject({ ok: false, kind: 'WasmTrap' });
    expect(run('write_past')).toMatchObject({ ok: true });
    expect(words(run('observe'))).toEqual([1, 0, 7, 7, 2, 0, 1, 0]);
  });

  it('a call that grows a table drops the instance (a table cannot shrink): the next call gets a fresh one', () => {
    const pool = new InstancePool(probe.module, probe.reuse);
    const run = (m: string) => execute(pool, probe.exportTypes, req(m), none, DEFAULT_LIMITS);
    run('grow_table');
    expect(words(run('observe'))).toEqual([1, 0, 7, 7, 2, 0, 1, 0]);
    expect(pool.created).toBe(2);
  });
});

describe('real-app-shaped and bench apps: a kept instance answers as fresh instances do', () => {
  for (const app of ['kv_store', 'kv_flat']) {
    it(`${app}: 300 random sets, gets, lens and removes give identical results`, async () => {
      const g = await compileGuest(await buildTestApp(app), DEFAULT_LIMITS);
      expect(g.reuse?.memoryPages).toBeDefined();
      expect(g.reuse?.tables).toEqual([]); // no instruction changes a table: nothing to restore
      const pool = new InstancePool(g.module, g.reuse);
      const [kept, fresh] = [new MemoryView(), new MemoryView()];
      // the same clock for both runs (kv_store stamps its writes with time_now)
      let clock = 1_000;
      vi.spyOn(performance, 'now').mockImplementation(() => clock);
      let seed = 22;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
      const both = (method: string, input?: unknown) => {
        const a = execute(pool, g.exportTypes, req(method, input), backendOf(kept), DEFAULT_LIMITS);
        const b = execute(g.module, g.exportTypes, req(method, input), backendOf(fresh), DEFAULT_LIMITS);
        expect(a).toEqual(b);
        if (a.ok) kept.apply(a.writes);
        if (b.ok) fresh.apply(b.writes);
        clock += 1;
        return a;
      };
      expect(both('init')).toMatchObject({ ok: true });
      const methods = app === 'kv_store' ? ['set', 'set', 'get', 'get', 'len', 'remove'] : ['set', 'set', 'get', 'get', 'len'];
      for (let i = 0; i < 300; i++) {
        const m = methods[rand(methods.length)];
        const key = `k${rand(40)}`;
        const input = m === 'set' ? { key, value: `v${i}-${'x'.repeat(rand(300))}` } : m === 'len' ? {} : { key };
        const r = both(m, input);
        expect(r.ok, `${m} ${JSON.stringify(input)}`).toBe(true);
      }
      expect([...kept.entries.entries()]).toEqual([...fresh.entries.entries()]);
      expect(pool.created).toBe(1);
      expect(pool.reused).toBe(301);
      // kv_store's real memory grew past its snapshot, and the instance was kept all along
      const idle = (pool as unknown as { idle: { memory: WebAssembly.Memory; pristine: Uint8Array } }).idle;
      if (app === 'kv_store') expect(idle.memory.buffer.byteLength).toBeGreaterThan(idle.pristine.length);
    });
  }

  it('kv_store: a kept instance puts back only the bytes its call wrote (guest and host), and after each of 60 random calls its whole memory is the snapshot then zeros', async () => {
    const g = await compileGuest(await buildTestApp('kv_store'), DEFAULT_LIMITS);
    expect(g.reuse?.dirty).toBeDefined(); // every write of the app is marked (wasm-code.ts)
    const pool = new InstancePool(g.module, g.reuse);
    const view = new MemoryView();
    const kept = () => (pool as unknown as { idle: { memory: WebAssembly.Memory; pristine: Uint8Array } }).idle;
    let seed = 33;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    expect(execute(pool, g.exportTypes, req('init'), backendOf(view), DEFAULT_LIMITS)).toMatchObject({ ok: true });
    for (let i = 0; i < 60; i++) {
      const m = ['set', 'get', 'get', 'remove', 'len', 'nope'][rand(6)]!;
      const key = `k${rand(30)}`;
      const r = execute(pool, g.exportTypes, req(m, m === 'set' ? { key, value: 'y'.repeat(rand(2000)) } : { key }), backendOf(view), DEFAULT_LIMITS);
      if (r.ok) view.apply(r.writes);
      const { memory, pristine } = kept();
      const mem = new Uint8Array(memory.buffer);
      expect(Buffer.compare(mem.subarray(0, pristine.length), pristine), `${m} #${i}: below the snapshot's end`).toBe(0);
      const tail = mem.subarray(pristine.length);
      expect(Buffer.compare(tail, new Uint8Array(tail.length)), `${m} #${i}: past the snapshot`).toBe(0);
    }
    expect(pool.created).toBe(1);
  }, 120_000);

  it('a byte the host writes for the guest (read_register) far from any guest store is put back too', async () => {
    // the input is read into [40000, +len) by the host; the guest itself stores only the descriptor at 2200
    const HOSTWRITE = `(module
      (import "env" "input" (func $input (param i64)))
      (import "env" "register_len" (func $len (param i64) (result i64)))
      (import "env" "read_register" (func $read (param i64 i64) (result i32)))
      (memory (export "memory") 1)
      (func (export "take")
        (call $input (i64.const 1))
        (i64.store (i32.const 2200) (i64.const 40000))
        (i64.store (i32.const 2208) (call $len (i64.const 1)))
        (drop (call $read (i64.const 1) (i64.const 2200)))))`;
    const g = await compileGuest(wat(HOSTWRITE), DEFAULT_LIMITS);
    expect(g.reuse?.dirty).toBeDefined();
    const pool = new InstancePool(g.module, g.reuse);
    expect(execute(pool, g.exportTypes, req('take', 'x'.repeat(300)), none, DEFAULT_LIMITS)).toMatchObject({ ok: true });
    const { memory, pristine } = (pool as unknown as { idle: { memory: WebAssembly.Memory; pristine: Uint8Array } }).idle;
    expect(Buffer.compare(new Uint8Array(memory.buffer), pristine)).toBe(0);
  });
});
