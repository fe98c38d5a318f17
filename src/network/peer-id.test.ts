import './polyfill.ts';
import { generateKeyPairSync } from 'node:crypto';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import { describe, expect, it } from 'vitest';
import { libp2pPrivateKey } from './peer-id.ts';

describe('libp2pPrivateKey', () => {
  it('signs exactly as libp2p’s own key made from the same seed', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const ours = libp2pPrivateKey(privateKey);
    const theirs = privateKeyFromRaw(ours.raw);
    for (const message of [new Uint8Array(0), Buffer.from('a gossip message'), new Uint8Array(4096).fill(7)]) {
      const sig = await ours.sign(message);
      expect(Buffer.from(sig)).toEqual(Buffer.from(await theirs.sign(message)));
      expect(await ours.publicKey.verify(message, sig)).toBe(true);
    }
    // a multi-part message (libp2p's Uint8ArrayList) is signed as its concatenation
    const list = { subarray: () => Buffer.from('two parts') } as unknown as Uint8Array;
    expect(Buffer.from(await ours.sign(list))).toEqual(Buffer.from(await theirs.sign(Buffer.from('two parts'))));
  });

  it('refuses a key that is not Ed25519', () => {
    expect(() => libp2pPrivateKey(generateKeyPairSync('x25519').privateKey)).toThrow(/Ed25519/);
  });
});
