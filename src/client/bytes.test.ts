import { describe, expect, it } from 'vitest';
import { bytesAsText, bytesToHex, displayBytes, isByteArray } from './bytes.ts';

const utf8 = (s: string) => [...new TextEncoder().encode(s)];

describe('byte fields for display', () => {
  it('shows printable UTF-8 as text, newlines and tabs included', () => {
    expect(displayBytes(utf8('{"key":"greeting","value":"héllo"}'))).toBe('{"key":"greeting","value":"héllo"}');
    expect(displayBytes(utf8('a\tb\nc'))).toBe('a\tb\nc');
    expect(displayBytes([])).toBe('');
  });

  it('shows invalid UTF-8 and control characters as 0x-prefixed hex', () => {
    expect(displayBytes([0xff, 0x00, 0x10])).toBe('0xff0010');
    expect(bytesAsText([0x41, 0x00])).toBeUndefined();
    expect(bytesAsText([0xc3])).toBeUndefined(); // a truncated sequence
  });

  it('writes hex in lowercase, two digits a byte', () => {
    expect(bytesToHex([0, 1, 171, 255])).toBe('0001abff');
  });

  it('recognises byte arrays only', () => {
    expect(isByteArray([0, 255])).toBe(true);
    expect(isByteArray([])).toBe(true);
    expect(isByteArray([256])).toBe(false);
    expect(isByteArray([1.5])).toBe(false);
    expect(isByteArray(['a'])).toBe(false);
    expect(isByteArray('ab')).toBe(false);
  });
});
