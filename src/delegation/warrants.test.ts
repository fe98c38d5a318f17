/**
 * The warrant layouts against the reference's published vectors (core `crates/account/src/tests/
 * {warrant,creation,governance}_wire_fixture.rs`): the commitments, the signing preimages and the
 * full borsh bytes, signatures included (Ed25519 is deterministic; the fixtures sign with the
 * key of seed [7; 32]).
 */
import { describe, expect, it } from 'vitest';
import { keyFromSeed } from '../crypto/seeded-keys.ts';
import { ed25519Sign, privateKeyObject } from '../crypto/keys.ts';
import { HearthError } from '../errors.ts';
import {
  creationSigningPayload,
  decodeCreationWarrant,
  decodeGovernanceWarrant,
  decodeIntentWarrant,
  encodeCreationWarrant,
  encodeGovernanceWarrant,
  encodeIntentWarrant,
  governanceSigningPayload,
  initHash,
  intentHash,
  intentSigningPayload,
  opHash,
  RC41_WARRANT_BYTES,
  warrantSignatureValid,
  type CreationWarrant,
  type GovernanceWarrant,
  type IntentWarrant,
} from './warrants.ts';

const b = (byte: number) => byte.toString(16).padStart(2, '0').repeat(32);
const key7 = keyFromSeed(new Uint8Array(32).fill(7));
const sign = (payload: Buffer) => ed25519Sign(privateKeyObject(key7.privateKey), payload);
const common = {
  authorAccount: b(0x22),
  authorDeviceKey: key7.publicKey,
  executor: b(0x33),
  executorKey: b(0x77),
  accountHeads: [b(0x55)],
  governanceFloor: [b(0x66)],
  nonce: 42n,
  notAfter: 1_700_000_000n,
};

describe('intent warrant (warrant_wire_fixture.rs)', () => {
  const terms = { ...common, context: b(0x11), releaseBytecodeId: b(0x44), releaseVersion: '1.0.0', method: 'set', intentHash: intentHash('set', Buffer.from('{"key":"k","value":"v"}')) };
  const w: IntentWarrant = { ...terms, signature: sign(intentSigningPayload(terms)) };

  it('pins the intent hash, the preimage and the 392 wire bytes', () => {
    expect(terms.intentHash).toBe('dc066cc8524c74dc21714174009df536376e3151f5b92f0a676defde599dbae5');
    expect(intentSigningPayload(terms).toString('hex')).toBe('f38e2c9eb7e78025f8797bb34168fe48da95a20320fc62fc2da41e3efd30607c');
    const bytes = encodeIntentWarrant(w);
    expect(bytes.length).toBe(392);
    expect(bytes.toString('hex')).toBe(
      b(0x11) + b(0x22) + key7.publicKey + b(0x33) + b(0x77) + b(0x44) + '05000000' + '312e302e30' + '03000000' + '736574' +
        'dc066cc8524c74dc21714174009df536376e3151f5b92f0a676defde599dbae5' + '01000000' + b(0x55) + '01000000' + b(0x66) +
        '2a00000000000000' + '00f1536500000000' +
        'e42f753e1a30657fe036b0c0a07030f3f6d92ea56749921c5a6ae07eb966cb501ed439f7a8007dfce0ccb6b5a8b94bdda9f48db9c84f181e9fbaa0d208726b02',
    );
    expect(decodeIntentWarrant(bytes)).toEqual(w);
    expect(warrantSignatureValid(w)).toBe(true);
    expect(warrantSignatureValid({ ...w, nonce: 43n })).toBe(false);
  });

  it('refuses trailing bytes, too many heads, an rc.41 warrant and a truncated one with 400s', () => {
    const bytes = encodeIntentWarrant(w);
    const refusal = (x: Buffer) => {
      try {
        decodeIntentWarrant(x);
      } catch (e) {
        return e instanceof HearthError && e.kind === 'bad_request' ? e.message : `unexpected ${String(e)}`;
      }
      return 'decoded';
    };
    expect(refusal(Buffer.concat([bytes, Buffer.from([0])]))).toMatch(/trailing/);
    expect(refusal(bytes.subarray(0, 300))).toMatch(/truncated/);
    expect(refusal(Buffer.alloc(RC41_WARRANT_BYTES))).toMatch(/rc\.41/);
    const many = encodeIntentWarrant({ ...w, accountHeads: Array.from({ length: 65 }, () => b(1)) });
    expect(refusal(many)).toMatch(/at most 64/);
  });
});

describe('context creation warrant (creation_wire_fixture.rs)', () => {
  const terms = {
    ...common,
    group: b(0x11),
    seed: b(0x12),
    applicationId: b(0x44),
    serviceName: null,
    name: 'general',
    initHash: initHash(Buffer.from('{"name":"general"}')),
  };
  const w: CreationWarrant = { ...terms, signature: sign(creationSigningPayload(terms)) };

  it('pins the init hash, the preimage and the 421 wire bytes', () => {
    expect(terms.initHash).toBe('074dc4be8c7abe685532a48947430edd0301b42f60222e715a834e723d2a055e');
    expect(creationSigningPayload(terms).toString('hex')).toBe('7e1126b215a794e565bb59c630cb1a36e43590c4bd8f62c6111792f77c231598');
    const bytes = encodeCreationWarrant(w);
    expect(bytes.length).toBe(421);
    expect(bytes.subarray(bytes.length - 64).toString('hex')).toBe(
      '19103d73752d052f747911b4b36e423221d89d120bf6f4d32122d3c4fd1fb0309add40f3f3b80a5e5d6fefa02de5f4d6bb914c85c5c8b10a3a0e3a0e22c08400',
    );
    expect(decodeCreationWarrant(bytes)).toEqual(w);
    expect(warrantSignatureValid(w)).toBe(true);
    // None and Some("") sign differently
    expect(warrantSignatureValid({ ...w, serviceName: '' })).toBe(false);
  });
});

describe('governance warrant (governance_wire_fixture.rs)', () => {
  const terms = { ...common, scope: b(0x11), kind: 'Root' as const, opHash: opHash('Root', Buffer.from([1, 2, 3])) };
  const w: GovernanceWarrant = { ...terms, signature: sign(governanceSigningPayload(terms)) };

  it('pins the op hash, the preimage and the 345 wire bytes', () => {
    expect(terms.opHash).toBe('d6bc121f9fcf7b85bea94d356d620c14dd8e1ae5fa2317cbcfc2c486cf04dfb3');
    expect(governanceSigningPayload(terms).toString('hex')).toBe('b71a40cfbbe50e40d3423e8729a9ca8359e69f2762396922e6b314a971c5f720');
    const bytes = encodeGovernanceWarrant(w);
    expect(bytes.length).toBe(345);
    expect(bytes.subarray(bytes.length - 64).toString('hex')).toBe(
      '03ce6c011f565924099b2c776032a1cfe540d1c4c09fad0b470723f8ee76138d1d685a20948edf4dee2901d3f9187e3363a16e3b141b0bc94553f5948becae07',
    );
    expect(decodeGovernanceWarrant(bytes)).toEqual(w);
    expect(warrantSignatureValid(w)).toBe(true);
    expect(() => decodeGovernanceWarrant(Buffer.concat([bytes.subarray(0, 32), Buffer.from([9]), bytes.subarray(33)]))).toThrow(/neither Group/);
  });
});
