/** Pairing statement, confirmation code and device proofs: layouts, age window, tampering. */
import { expect, it } from 'vitest';
import { accountIdOf } from '../crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../crypto/keys.ts';
import { encodeScopeProof, parseCredential, parseScopeProof } from './credentials.ts';
import { checkStatement, confirmationCode, encodeCredential, encodeStatement, statementDigest, type PairingOffer } from './pairing.ts';

const device = generateKeyPair('ed25519');
const root = generateKeyPair('ed25519');
const signDevice = (m: Uint8Array) => ed25519Sign(privateKeyObject(device.privateKey), m);
const signRoot = (m: Uint8Array) => ed25519Sign(privateKeyObject(root.privateKey), m);
const offer: PairingOffer = { accountId: accountIdOf(Buffer.from(root.publicKey, 'hex')), deviceId: 'd1'.repeat(32), kemPublicKey: 'c2'.repeat(32), signPublicKey: device.publicKey };

it('a statement is 72 bytes, valid for 300 s back and 60 s ahead, and bound to the offer', () => {
  const issued = 1_800_000_000n;
  const st = encodeStatement(issued, signDevice(statementDigest(offer, issued)));
  expect(st).toHaveLength(144);
  expect(checkStatement(offer, st, 1_800_000_300)).toEqual({ ok: true });
  expect(checkStatement(offer, st, 1_800_000_301)).toMatchObject({ ok: false, reason: expect.stringContaining('300') });
  expect(checkStatement(offer, st, 1_800_000_000 - 61)).toMatchObject({ ok: false, reason: expect.stringContaining('future') });
  expect(checkStatement({ ...offer, deviceId: 'd2'.repeat(32) }, st, 1_800_000_000).ok).toBe(false);
  expect(checkStatement(offer, st.slice(0, 128), 1_800_000_000).ok).toBe(false);
});

it('the confirmation code is four groups of four uppercase hex and depends on every field', () => {
  expect(confirmationCode(offer)).toMatch(/^([0-9A-F]{4}-){3}[0-9A-F]{4}$/);
  expect(confirmationCode({ ...offer, kemPublicKey: 'c3'.repeat(32) })).not.toBe(confirmationCode(offer));
});

it('credentials and scope proofs verify from their bytes and refuse tampering', () => {
  const cred = encodeCredential({ rootPublicKey: root.publicKey, deviceId: offer.deviceId, signPublicKey: device.publicKey, kemPublicKey: offer.kemPublicKey, deviceEpoch: 0 }, signRoot);
  expect(parseCredential(cred)).toEqual({ accountId: offer.accountId, rootPublicKey: root.publicKey, deviceId: offer.deviceId, signingKey: device.publicKey, kemPublicKey: offer.kemPublicKey });
  expect(() => parseCredential(cred.slice(0, 100) + (cred[100] === '0' ? '1' : '0') + cred.slice(101))).toThrow(/DeviceLinkInvalid/);
  const only = encodeScopeProof({ rootPublicKey: root.publicKey, deviceId: offer.deviceId, scopeEpoch: 1, applications: ['ee'.repeat(32)] }, signRoot);
  expect(parseScopeProof(only)).toEqual({ accountId: offer.accountId, deviceId: offer.deviceId, applications: ['ee'.repeat(32)] });
  const all = encodeScopeProof({ rootPublicKey: root.publicKey, deviceId: offer.deviceId, scopeEpoch: 1, applications: 'all' }, signRoot);
  expect(parseScopeProof(all).applications).toEqual([]);
  expect(() => parseScopeProof(all.slice(0, -2) + (all.endsWith('00') ? '01' : '00'))).toThrow(/DeviceLinkInvalid/);
  expect(() => parseScopeProof('bb')).toThrow(/DeviceLinkInvalid/);
});
