/**
 * Sealing to an account root and opening it with the root's private seed: the round trip, the
 * envelope's sizes, and that another account, epoch, root or a flipped bit fails to open.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { accountIdOf } from './ids.ts';
import { openSealed, sealToRoot } from './seal.ts';
import { ed25519SeedOfPkcs8 } from './x25519.ts';
import { rawPublicKeyBytes } from './keys.ts';

function root() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const rootPublicKey = rawPublicKeyBytes(publicKey).toString('hex');
  const seed = ed25519SeedOfPkcs8(privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'));
  return { rootPublicKey, seed, accountId: accountIdOf(Buffer.from(rootPublicKey, 'hex')) };
}

describe('sealToRoot / openSealed', () => {
  it('round-trips: only the root holder opens what was sealed to it', () => {
    const r = root();
    const plaintext = randomBytes(1000);
    const env = sealToRoot({ accountId: r.accountId, rootPublicKey: r.rootPublicKey, rootEpoch: 0 }, plaintext);
    expect(env.accountRootEpoch).toBe(0);
    expect(env.ephemeralPublicKey).toMatch(/^[0-9a-f]{64}$/);
    expect(env.nonce).toMatch(/^[0-9a-f]{24}$/);
    expect(env.ciphertext.length).toBe((plaintext.length + 16) * 2);
    expect(openSealed(r.seed, r.accountId, env).equals(plaintext)).toBe(true);
  });

  it('uses a fresh ephemeral key and nonce per seal', () => {
    const r = root();
    const a = sealToRoot({ accountId: r.accountId, rootPublicKey: r.rootPublicKey, rootEpoch: 0 }, Buffer.from('aa', 'hex'));
    const b = sealToRoot({ accountId: r.accountId, rootPublicKey: r.rootPublicKey, rootEpoch: 0 }, Buffer.from('aa', 'hex'));
    expect(a.ephemeralPublicKey).not.toBe(b.ephemeralPublicKey);
    expect(a.nonce).not.toBe(b.nonce);
  });

  it('does not open under another root, another account, another epoch or a flipped ciphertext bit', () => {
    const r = root();
    const env = sealToRoot({ accountId: r.accountId, rootPublicKey: r.rootPublicKey, rootEpoch: 0 }, Buffer.from('secret'));
    expect(() => openSealed(root().seed, r.accountId, env)).toThrow();
    expect(() => openSealed(r.seed, 'ab'.repeat(32), env)).toThrow();
    expect(() => openSealed(r.seed, r.accountId, { ...env, accountRootEpoch: 1 })).toThrow();
    const flipped = Buffer.from(env.ciphertext, 'hex');
    flipped[0] ^= 1;
    expect(() => openSealed(r.seed, r.accountId, { ...env, ciphertext: flipped.toString('hex') })).toThrow();
  });

  it('refuses a root key that is not a usable point', () => {
    const identity = `01${'00'.repeat(31)}`;
    expect(() => sealToRoot({ accountId: 'ab'.repeat(32), rootPublicKey: identity, rootEpoch: 0 }, Buffer.from('x'))).toThrow();
  });
});
