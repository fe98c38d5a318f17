import { describe, expect, it } from 'vitest';
import { testAbi, tinyWasm } from '../../test/helpers/bundles.ts';
import { appendCustomSection, customSection, embeddedAbi, isWasmModule, readOnlyMethodsOf } from './wasm.ts';

describe('wasm custom sections', () => {
  it('finds an appended section and leaves the module valid', () => {
    const wasm = appendCustomSection(tinyWasm(), 'x', Buffer.from('payload'));
    expect(Buffer.from(customSection(wasm, 'x')!).toString()).toBe('payload');
    expect(customSection(wasm, 'y')).toBeUndefined();
    expect(WebAssembly.validate(new Uint8Array(wasm))).toBe(true);
  });

  it('handles a payload whose size needs a multi-byte LEB128', () => {
    const big = Buffer.alloc(300, 0x61);
    const wasm = appendCustomSection(tinyWasm(), 'big', big);
    expect(Buffer.from(customSection(wasm, 'big')!)).toEqual(big);
    expect(WebAssembly.validate(new Uint8Array(wasm))).toBe(true);
  });

  it('refuses bytes that are not a module, and a section running past the end', () => {
    expect(isWasmModule(Buffer.from('not wasm'))).toBe(false);
    expect(() => customSection(Buffer.from('not wasm at all'), 'x')).toThrow(/not a WebAssembly module/);
    const truncated = appendCustomSection(tinyWasm(), 'x', Buffer.from('payload')).subarray(0, -3);
    expect(() => customSection(truncated, 'x')).toThrow(/past the end/);
  });
});

describe('embedded ABI', () => {
  it('is null without a calimero_abi_v1 section', () => {
    expect(embeddedAbi(tinyWasm())).toBeNull();
  });

  it('parses a wasm-abi/1 section and lists read-only methods', () => {
    const abi = embeddedAbi(tinyWasm({ abi: testAbi(['get', 'set', 'len'], ['get', 'len']) }));
    expect(abi?.schema_version).toBe('wasm-abi/1');
    expect([...readOnlyMethodsOf(abi)].sort()).toEqual(['get', 'len']);
    expect(readOnlyMethodsOf(null).size).toBe(0);
  });

  it('refuses a future schema version and a section that is not JSON', () => {
    expect(() => embeddedAbi(tinyWasm({ abi: { schema_version: 'wasm-abi/2', methods: [] } }))).toThrow(/unsupported ABI schema version/);
    const bad = appendCustomSection(tinyWasm(), 'calimero_abi_v1', Buffer.from('{nope'));
    expect(() => embeddedAbi(bad)).toThrow(/not JSON/);
  });
});
