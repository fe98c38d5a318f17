/**
 * The virtual memory size (wasm-code.ts): a rewritten module answers `memory.size` and
 * `memory.grow` exactly as the original does on a fresh instance (success, failure, overflow),
 * tells whether an instruction can change a table, marks every byte a store or bulk write touches
 * (the dirty range a kept instance puts back, issue #33), and a module it cannot decode is left alone.
 */
import { describe, expect, it } from 'vitest';
import { buildTestApp, wat } from '../../test/helpers/wasm-apps.ts';
import { capMemory } from './wasm-binary.ts';
import { virtualizeMemory } from './wasm-code.ts';

const GROWER = `(module
  (memory (export "memory") 2 5)
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  (func (export "size") (result i32) (memory.size))
  (func (export "store") (param i32 i32) (i32.store8 (local.get 0) (local.get 1))))`;

type Exports = { grow(n: number): number; size(): number; memory: WebAssembly.Memory };

describe('virtualizeMemory', () => {
  it('answers memory.size and memory.grow as the original module does, growing the real memory only past it', () => {
    const original = wat(GROWER);
    const v = virtualizeMemory(original)!;
    expect(v).not.toBeNull();
    expect(v.tablesMutable).toBe(false);
    const a = new WebAssembly.Instance(new WebAssembly.Module(original)).exports as unknown as Exports;
    const b = new WebAssembly.Instance(new WebAssembly.Module(v.bytes as Uint8Array<ArrayBuffer>)).exports as unknown as Exports;
    const pages = (new WebAssembly.Instance(new WebAssembly.Module(v.bytes as Uint8Array<ArrayBuffer>)).exports[v.pagesExport] as WebAssembly.Global).value;
    expect(pages).toBe(2);
    for (const n of [0, 1, 0, 2, 1, -1, 0x7fffffff, 0, 1]) {
      expect([b.grow(n), b.size()]).toEqual([a.grow(n), a.size()]);
    }
    expect(b.memory.buffer.byteLength).toBe(a.memory.buffer.byteLength);
  });

  it('the size is a global: set back, the guest sees the old size while the real memory keeps its pages', () => {
    const v = virtualizeMemory(wat(GROWER))!;
    const inst = new WebAssembly.Instance(new WebAssembly.Module(v.bytes as Uint8Array<ArrayBuffer>));
    const e = inst.exports as unknown as Exports;
    const size = inst.exports[v.pagesExport] as WebAssembly.Global;
    expect(e.grow(3)).toBe(2);
    expect(e.size()).toBe(5);
    expect(e.grow(1)).toBe(-1); // past the maximum
    size.value = 2;
    expect(e.size()).toBe(2);
    expect(e.memory.buffer.byteLength).toBe(5 * 65536);
    // growing within the real memory succeeds without growing it; past the maximum still fails
    expect(e.grow(2)).toBe(2);
    expect(e.memory.buffer.byteLength).toBe(5 * 65536);
    expect(e.grow(2)).toBe(-1);
    expect(e.size()).toBe(4);
  });

  it('tells whether an instruction can change a table', () => {
    const t = (body: string) =>
      virtualizeMemory(wat(`(module (memory (export "memory") 1) (table $t 2 funcref) (elem (i32.const 0) $f) (func $f) (func (export "m") ${body}))`))!;
    expect(t('(drop (table.get $t (i32.const 0)))').tablesMutable).toBe(false);
    expect(t('(table.set $t (i32.const 1) (ref.func $f))').tablesMutable).toBe(true);
    expect(t('(drop (table.grow $t (ref.null func) (i32.const 1)))').tablesMutable).toBe(true);
    expect(t('(table.fill $t (i32.const 0) (ref.null func) (i32.const 1))').tablesMutable).toBe(true);
  });

  it('rewrites the test apps, which still validate, and leaves a module without memory or with an unknown opcode alone', async () => {
    for (const name of ['kv_store', 'kv_flat', 'kv']) {
      const v = virtualizeMemory(capMemory(await buildTestApp(name), 1024))!;
      expect(v, name).not.toBeNull();
      expect(WebAssembly.validate(v.bytes as Uint8Array<ArrayBuffer>), name).toBe(true);
      expect(v.tablesMutable).toBe(false);
    }
    expect(virtualizeMemory(wat('(module (func (export "m")))'))).toBeNull();
    // an opcode the decoder does not know (0xd5, ref.eq in the GC proposal), hand-placed in a body
    const bytes = wat('(module (memory (export "memory") 1) (func (export "m") (nop) (nop)))');
    expect(virtualizeMemory(bytes)).not.toBeNull();
    const at = bytes.findIndex((b, i) => b === 0x01 && bytes[i + 1] === 0x01 && bytes[i + 2] === 0x0b);
    expect(at).toBeGreaterThan(0);
    bytes[at] = 0xd5;
    expect(virtualizeMemory(bytes)).toBeNull();
  });

  it('marks every write: the dirty range covers each store (its offset included) and memory.fill / copy / init; a SIMD store leaves it unmarked', () => {
    const WRITER = `(module
      (memory (export "memory") 2)
      (data $d "abcd")
      (func (export "i32") (param i32) (i32.store offset=1000 (local.get 0) (i32.const 7)))
      (func (export "i64") (param i32) (i64.store (local.get 0) (i64.const 7)))
      (func (export "f32") (param i32) (f32.store (local.get 0) (f32.const 7)))
      (func (export "f64") (param i32) (f64.store (local.get 0) (f64.const 7)))
      (func (export "b8") (param i32) (i64.store8 offset=3 (local.get 0) (i64.const 7)))
      (func (export "fill") (param i32 i32) (memory.fill (local.get 0) (i32.const 1) (local.get 1)))
      (func (export "copy") (param i32 i32) (memory.copy (local.get 0) (i32.const 0) (local.get 1)))
      (func (export "init") (param i32) (memory.init $d (local.get 0) (i32.const 0) (i32.const 4))))`;
    const v = virtualizeMemory(wat(WRITER))!;
    expect(v.dirty).toBeDefined();
    const inst = new WebAssembly.Instance(new WebAssembly.Module(v.bytes as Uint8Array<ArrayBuffer>));
    const e = inst.exports as unknown as Record<string, (...a: number[]) => void>;
    const [lo, hi] = [inst.exports[v.dirty!.lo] as WebAssembly.Global, inst.exports[v.dirty!.hi] as WebAssembly.Global];
    const range = (f: () => void): [number, number] => {
      lo.value = -1;
      hi.value = 0;
      f();
      return [(lo.value as number) >>> 0, (hi.value as number) >>> 0];
    };
    expect(range(() => undefined)).toEqual([2 ** 32 - 1, 0]); // nothing written: empty
    expect(range(() => e.i32!(5000))).toEqual([6000, 6008]);
    expect(range(() => e.i64!(70000))).toEqual([70000, 70008]);
    expect(range(() => e.f32!(12))).toEqual([12, 20]);
    expect(range(() => e.f64!(131064))).toEqual([131064, 131072]);
    expect(range(() => e.b8!(40))).toEqual([43, 51]);
    expect(range(() => (e.fill!(100, 5000), e.i32!(0)))).toEqual([100, 5100]); // widened, never narrowed
    expect(range(() => e.copy!(9000, 300))).toEqual([9000, 9300]);
    expect(range(() => e.init!(20000))).toEqual([20000, 20004]);
    // a store that traps (past the memory) writes nothing, whatever it marks
    expect(() => e.i32!(2 * 65536)).toThrow(WebAssembly.RuntimeError);
    const simd = virtualizeMemory(wat('(module (memory (export "memory") 1) (func (export "m") (v128.store (i32.const 0) (v128.const i64x2 1 2))))'))!;
    expect(simd).not.toBeNull();
    expect(simd.dirty).toBeUndefined();
  });
});
