import { describe, expect, it } from 'vitest';
import { appendCustomSection, capMemory, inspectModule, readCustomSection, WasmFormatError } from './wasm-binary.ts';

// (module (import "env" "log_utf8" (func (param i64))) (memory (export "memory") 2) (func (export "run")))
const MODULE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x08, 0x02, 0x60, 0x01, 0x7e, 0x00, 0x60, 0x00, 0x00, // types: (i64)->(), ()->()
  0x02, 0x10, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x08, 0x6c, 0x6f, 0x67, 0x5f, 0x75, 0x74, 0x66, 0x38, 0x00, 0x00, // import env.log_utf8 type 0
  0x03, 0x02, 0x01, 0x01, // one function of type 1
  0x05, 0x03, 0x01, 0x00, 0x02, // memory min 2, no max
  0x07, 0x10, 0x02, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x01, // exports
  0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, // code
]);

describe('wasm-binary', () => {
  it('reads imports with their types, exports with their types, and the memory', () => {
    const info = inspectModule(MODULE);
    expect(info.imports).toEqual([{ module: 'env', name: 'log_utf8', kind: 'function', type: { params: ['i64'], results: [] } }]);
    expect(info.exports).toEqual([
      { name: 'memory', kind: 'memory' },
      { name: 'run', kind: 'function', type: { params: [], results: [] } },
    ]);
    expect(info.memory).toEqual({ min: 2, max: undefined, memory64: false, shared: false });
    expect(() => new WebAssembly.Module(MODULE)).not.toThrow();
  });

  it('caps the memory maximum so V8 refuses growth past it', () => {
    const capped = capMemory(MODULE, 3);
    expect(inspectModule(capped).memory).toMatchObject({ min: 2, max: 3 });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(capped as Uint8Array<ArrayBuffer>), { env: { log_utf8: () => {} } });
    const memory = instance.exports.memory as WebAssembly.Memory;
    expect(memory.grow(1)).toBe(2);
    expect(() => memory.grow(1)).toThrow(RangeError);
    // an already smaller maximum is kept
    expect(capMemory(capped, 10)).toBe(capped);
  });

  it('appends a custom section and reads it back, leaving a valid module', () => {
    const payload = new TextEncoder().encode('{"schema_version":"wasm-abi/1"}');
    const out = appendCustomSection(MODULE, 'calimero_abi_v1', payload);
    expect(new TextDecoder().decode(readCustomSection(out, 'calimero_abi_v1'))).toBe('{"schema_version":"wasm-abi/1"}');
    expect(readCustomSection(MODULE, 'calimero_abi_v1')).toBeUndefined();
    const mod = new WebAssembly.Module(out as Uint8Array<ArrayBuffer>);
    expect(WebAssembly.Module.customSections(mod, 'calimero_abi_v1')[0].byteLength).toBe(payload.length);
  });

  it('refuses bytes that are not a module', () => {
    expect(() => inspectModule(new Uint8Array([1, 2, 3]))).toThrow(WasmFormatError);
    expect(() => inspectModule(MODULE.subarray(0, 20))).toThrow(/runs past/);
  });
});
