import { describe, expect, it } from 'vitest';
import { proposals } from './traffic.ts';

const msg = (s: string) => {
  const body = Buffer.from(`${s}\n`);
  return Buffer.concat([Buffer.from([body.byteLength]), body]);
};

describe('multistream-select proposals', () => {
  it('reads the complete messages, and stops at an incomplete one', () => {
    const bytes = Buffer.concat([msg('/multistream/1.0.0'), msg('/hearth/x/1'), msg('/other')]);
    expect(proposals(bytes)).toEqual(['/multistream/1.0.0', '/hearth/x/1', '/other']);
    expect(proposals(bytes.subarray(0, bytes.byteLength - 2))).toEqual(['/multistream/1.0.0', '/hearth/x/1']);
    const long = Buffer.concat([Buffer.from([0x85, 0x01]), Buffer.alloc(133, 0x61)]); // a two-byte length
    expect(proposals(long)).toEqual(['a'.repeat(133)]);
    expect(proposals(Buffer.from([0xff, 0xff, 0xff, 0xff]))).toEqual([]);
  });
});
