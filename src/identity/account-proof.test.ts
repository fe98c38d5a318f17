import { describe, expect, it } from 'vitest';
import { ed25519FromSeed, mintProof, seedOf } from '../../test/helpers/presence.ts';
import { decodeDeviceAccountProof, encodeDeviceAccountProof, verifyDeviceAccountProof } from './account-proof.ts';

/** core `crates/account/src/tests/sdk_credential_fixture.rs`: a credential mero-js minted, that core verifies. */
const SDK_CREDENTIAL_HEX =
  '02ed6a47a39da869b5446155e40b2d93f1e3f0167be26732bae7a3ef9d8e3a3fd300000000ca999783990fd7f4ea0c192135f78c17ac77745bf580b2ed20fea455a8133845044305da225179a277d6d96e07ff21ea2b3905c7e22b0b3625350f15c6f432938b237d788e8eaaef550c6d125823fa45f1fd5fc29b2c88bdf871119471fc13123a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a000000000000000058b84a4124014258b6548e2bc323bc6f42ea5dedfcc721f2501e22cfd3fc3e2e36ab9d76e648726379000a66f1061838673133a31b5516861811fcb0adaafe07';

describe('AccountProof<DeviceCert> (reference layout)', () => {
  it('decodes and verifies the credential the reference pins for the TypeScript SDK', () => {
    const proof = decodeDeviceAccountProof(Buffer.from(SDK_CREDENTIAL_HEX, 'hex'));
    const cert = verifyDeviceAccountProof(proof, 'ca999783990fd7f4ea0c192135f78c17ac77745bf580b2ed20fea455a8133845');
    expect(cert.signPk).toBe('8b237d788e8eaaef550c6d125823fa45f1fd5fc29b2c88bdf871119471fc1312');
    expect(proof.genesis.version).toBe(2);
    expect(proof.chain).toEqual([]);
    expect(encodeDeviceAccountProof(proof).toString('hex')).toBe(SDK_CREDENTIAL_HEX);
  });

  it('refuses the pinned credential with one bit of its certificate signature flipped', () => {
    const bytes = Buffer.from(SDK_CREDENTIAL_HEX, 'hex');
    bytes[bytes.length - 1] ^= 1;
    expect(() => verifyDeviceAccountProof(decodeDeviceAccountProof(bytes))).toThrow(/not signed by the account root key/);
  });

  it('refuses truncated and trailing bytes, and a genesis of another version', () => {
    const bytes = Buffer.from(SDK_CREDENTIAL_HEX, 'hex');
    expect(() => decodeDeviceAccountProof(bytes.subarray(0, bytes.length - 1))).toThrow(/truncated/);
    expect(() => decodeDeviceAccountProof(Buffer.concat([bytes, Buffer.from([0])]))).toThrow(/unexpected bytes/);
    const v1 = Buffer.from(bytes);
    v1[0] = 1;
    expect(() => verifyDeviceAccountProof(decodeDeviceAccountProof(v1))).toThrow(/genesis derives account/);
  });

  it('verifies a certificate signed by a rotated root key through the handoff chain', () => {
    const root = ed25519FromSeed(seedOf(0x55));
    const next = ed25519FromSeed(seedOf(0x56));
    const proof = mintProof({ signWithRoot: root.sign, rootPublicKey: root.publicKey, device: ed25519FromSeed(seedOf(0x66)), rotations: [next] });
    expect(proof.statement.keyEpoch).toBe(1);
    const back = decodeDeviceAccountProof(encodeDeviceAccountProof(proof));
    expect(verifyDeviceAccountProof(back).account).toBe(proof.statement.account);

    const forged = { ...back, chain: [{ ...back.chain[0], signature: next.sign(Buffer.from('x')) }] };
    expect(() => verifyDeviceAccountProof(forged)).toThrow(/handoff 0 is not signed/);
    const gap = { ...back, chain: [{ ...back.chain[0], fromEpoch: 1 }] };
    expect(() => verifyDeviceAccountProof(gap)).toThrow(/not contiguous/);
  });

  it('refuses a genesis from another root (it derives another account than the certificate names)', () => {
    const root = ed25519FromSeed(seedOf(0x55));
    const proof = mintProof({ signWithRoot: root.sign, rootPublicKey: root.publicKey, device: ed25519FromSeed(seedOf(0x66)) });
    const other = ed25519FromSeed(seedOf(0x99));
    expect(() => verifyDeviceAccountProof({ ...proof, genesis: { ...proof.genesis, rootSignPk: other.publicKey } })).toThrow(/genesis derives account/);
  });
});
