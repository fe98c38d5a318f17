/** The state browser's raw-rows labels (state-entries.ts): keys and values as a person reads them. */
import { describe, expect, it } from 'vitest';
import { rawKeyLabel, rawValueText } from './state-entries.ts';

const b64 = (bytes: number[] | string) => Buffer.from(typeof bytes === 'string' ? Buffer.from(bytes) : Uint8Array.from(bytes)).toString('base64');

describe('raw state labels', () => {
  it('shows a printable ASCII key as its text in quotes, anything else as hex', () => {
    expect(rawKeyLabel(Buffer.from('flat:item:k1').toString('hex'))).toBe('"flat:item:k1"');
    expect(rawKeyLabel('00ff')).toBe('00ff');
    expect(rawKeyLabel(Buffer.from('tab\there').toString('hex'))).toBe(Buffer.from('tab\there').toString('hex'));
    expect(rawKeyLabel(Buffer.from('é').toString('hex'))).toBe('c3a9');
    expect(rawKeyLabel('')).toBe('(empty key)');
  });

  it('shows a value as text when it is printable UTF-8, else as spaced hex', () => {
    expect(rawValueText(b64('héllo\nwörld'))).toEqual({ text: 'héllo\nwörld', as: 'text' });
    expect(rawValueText(b64([0, 1, 0xfe]))).toEqual({ text: '00 01 fe', as: 'hex' });
    expect(rawValueText(b64([0xc3]))).toEqual({ text: 'c3', as: 'hex' });
    expect(rawValueText(b64('a\u0007b'))).toEqual({ text: '61 07 62', as: 'hex' });
    expect(rawValueText('')).toEqual({ text: '', as: 'text' });
  });
});
