/**
 * A module whose instantiation fails inside a worker (its start function traps, or an active data
 * segment does not fit its memory): readying it ahead of a call (`WasmRuntime.prepare`, the worker's
 * `load` job) must neither crash the node (an 'error' of a worker no call is listening on) nor leave
 * a dead worker in the pool; the first call reports the trap as any call would.
 */
import { describe, expect, it } from 'vitest';
import { WasmRuntime } from './runtime.ts';
import { newViews, request } from './test-support.ts';

const section = (id: number, body: number[]) => [id, body.length, ...body];
const name = (s: string) => [s.length, ...Buffer.from(s)];

/** A module exporting `memory` (1 page) and `run`; `start` makes `run` its start function too; `data` adds an active segment at `dataAt`. */
function module(opts: { start?: boolean; dataAt?: number; ok?: boolean }): Uint8Array<ArrayBuffer> {
  const type = section(1, [1, 0x60, 0, 0]);
  const funcs = section(3, [1, 0]);
  const memory = section(5, [1, 0x00, 1]);
  const exports = section(7, [2, ...name('memory'), 0x02, 0, ...name('run'), 0x00, 0]);
  const start = opts.start ? section(8, [0]) : [];
  const code = section(10, [1, 3, 0, opts.ok ? 0x01 /* nop */ : 0x00 /* unreachable */, 0x0b]);
  // i32.const dataAt (LEB128 for values < 2^20), 2 bytes of data
  const at = opts.dataAt ?? 0;
  const leb = [(at & 0x7f) | 0x80, ((at >> 7) & 0x7f) | 0x80, (at >> 14) & 0x7f];
  const data = opts.dataAt !== undefined ? section(11, [1, 0, 0x41, ...leb, 0x0b, 2, 1, 2]) : [];
  return Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...type, ...funcs, ...memory, ...exports, ...start, ...code, ...data]);
}

describe('a module that fails at instantiation, readied in a worker (prepare)', () => {
  const cases = { 'a trapping start function': module({ start: true }), 'a data segment past its memory': module({ dataAt: 70_000 }) };
  for (const [what, wasm] of Object.entries(cases)) {
    it(`keeps the node and the worker up with ${what}; the call reports the trap, and other modules still run`, async () => {
      expect(WebAssembly.validate(wasm)).toBe(true);
      expect(() => new WebAssembly.Instance(new WebAssembly.Module(wasm))).toThrow(WebAssembly.RuntimeError);
      const errors: unknown[] = [];
      const onError = (e: unknown) => errors.push(e);
      process.on('uncaughtException', onError);
      const rt = new WasmRuntime({ poolSize: 2, deadlineMs: 5_000 });
      await rt.start();
      try {
        await rt.prepare({ applicationId: 'broken', wasm: async () => wasm });
        // the load job runs in the worker after prepare returns: let it fail with no call listening
        await new Promise((r) => setTimeout(r, 300));
        const started = performance.now();
        const r = await rt.call(request('broken', wasm, 'run', undefined, newViews()));
        expect(r).toMatchObject({ ok: false, kind: 'WasmTrap' });
        expect(performance.now() - started).toBeLessThan(4_000); // answered, not met at the deadline
        const again = await rt.call(request('broken', wasm, 'run', undefined, newViews()));
        expect(again).toMatchObject({ ok: false, kind: 'WasmTrap' });
        const fine = module({ ok: true });
        expect(await rt.call(request('fine', fine, 'run', undefined, newViews()))).toMatchObject({ ok: true, output: null });
        expect(rt.stats.replaced).toEqual({ deadline: 0, error: 0, exit: 0 });
        expect(errors).toEqual([]);
      } finally {
        process.off('uncaughtException', onError);
        await rt.stop();
      }
    }, 30_000);
  }
});
