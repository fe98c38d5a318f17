import { describe, expect, it } from 'vitest';
import { sniffMime } from './mime.ts';

describe('sniffMime', () => {
  it('recognises common magic bytes and defaults to octet-stream', () => {
    expect(sniffMime(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]))).toBe('image/png');
    expect(sniffMime(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0]))).toBe('application/wasm');
    expect(sniffMime(new TextEncoder().encode('%PDF-1.7'))).toBe('application/pdf');
    expect(sniffMime(new Uint8Array([1, 2, 3]))).toBe('application/octet-stream');
    expect(sniffMime(new Uint8Array(0))).toBe('application/octet-stream');
  });
});
