import { describe, expect, it } from 'vitest';
import { ed25519FromSeed, seedOf } from '../../test/helpers/presence.ts';
import { presenceSigningBytes, presenceStateHash, verifyPresenceSignature } from './presence-intents-statement.ts';

const typing = Buffer.from('{"typing":true}');

describe('calimero/presence/1 statement', () => {
  it('matches the vector the reference pins for mero-js (statement_vector_is_stable)', () => {
    const author = ed25519FromSeed(seedOf(0x22)).publicKey;
    const bytes = presenceSigningBytes({ contextId: '11'.repeat(32), author, seq: 7n, sentAtMs: 1_700_000_000_000n, state: typing });
    expect(bytes.toString('hex')).toBe(
      '63616c696d65726f2f70726573656e63652f311111111111111111111111111111111111111111111111111111111111111111a09aa5f47a6759802ff955f8dc2d2a14a5c99d23be97f864127ff9383455a4f007000000000000000068e5cf8b010000f25c119b355e48fcfc5c8acd6b7681d0d8dfe33f75ee6408aa162e13b05ca486',
    );
  });

  it('hashes a retraction differently from an empty slice', () => {
    expect(presenceStateHash(null).equals(presenceStateHash(new Uint8Array()))).toBe(false);
  });

  it('verifies the author signature and refuses a swapped state or another context', () => {
    const device = ed25519FromSeed(seedOf(0x66));
    const s = { contextId: '11'.repeat(32), author: device.publicKey, seq: 1n, sentAtMs: 5n, state: typing };
    const sig = device.sign(presenceSigningBytes(s));
    expect(verifyPresenceSignature(s, sig)).toBe(true);
    expect(verifyPresenceSignature({ ...s, state: Buffer.from('{"typing":false}') }, sig)).toBe(false);
    expect(verifyPresenceSignature({ ...s, contextId: '99'.repeat(32) }, sig)).toBe(false);
    expect(verifyPresenceSignature({ ...s, state: null }, sig)).toBe(false);
  });
});
