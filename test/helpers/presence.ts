/**
 * Minting what an account's device sends to `POST /contexts/{id}/presence-intents`, as a client
 * (mero-js) would: Ed25519 keys from seeds with node:crypto, the reference-layout
 * `AccountProof<DeviceCert>` and the signed `calimero/presence/1` statement.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import {
  ACCOUNT_GENESIS_VERSION,
  deviceCertPayload,
  encodeDeviceAccountProof,
  genesisAccountId,
  handoffPayload,
  type DeviceAccountProof,
  type RootKeyHandoff,
} from '../../src/identity/account-proof.ts';
import { presenceSigningBytes } from '../../src/events/presence-intents-statement.ts';
import { rawPublicKeyBytes } from '../../src/crypto/keys.ts';

export interface Ed25519 {
  key: KeyObject;
  publicKey: string;
  sign(m: Uint8Array): Buffer;
}

export function ed25519FromSeed(seed: Uint8Array): Ed25519 {
  const key = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  return { key, publicKey: rawPublicKeyBytes(key).toString('hex'), sign: (m) => sign(null, m, key) };
}

export const seedOf = (byte: number): Uint8Array => new Uint8Array(32).fill(byte);

export interface MintOptions {
  /** signs for the root key at epoch 0 (the genesis key) */
  signWithRoot: (m: Uint8Array) => Buffer;
  rootPublicKey: string;
  device: Ed25519;
  deviceId?: string;
  /** later root keys: each one handed off to by the previous */
  rotations?: Ed25519[];
  rootSigners?: ((m: Uint8Array) => Buffer)[];
}

/** A proof whose certificate is signed by the last root key of the chain (epoch = rotations). */
export function mintProof(o: MintOptions): DeviceAccountProof {
  const genesis = { version: ACCOUNT_GENESIS_VERSION, rootSignPk: o.rootPublicKey };
  const account = genesisAccountId(genesis);
  const signers = [o.signWithRoot, ...(o.rotations ?? []).map((k) => k.sign)];
  const chain: RootKeyHandoff[] = (o.rotations ?? []).map((k, i) => {
    const h = { account, fromEpoch: i, newRootSignPk: k.publicKey };
    return { ...h, signature: signers[i](handoffPayload(h)) };
  });
  const cert = { account, device: o.deviceId ?? '77'.repeat(32), signPk: o.device.publicKey, kemPk: '88'.repeat(32), keyEpoch: chain.length, deviceEpoch: 1 };
  return { genesis, chain, statement: { ...cert, signature: signers[chain.length](deviceCertPayload(cert)) } };
}

/** The JSON body of one presence intent. */
export function presenceBody(o: { contextId: string; device: Ed25519; proof: DeviceAccountProof; seq: number | bigint; sentAtMs: number; state: unknown | null }) {
  const state = o.state === null ? null : Buffer.from(JSON.stringify(o.state));
  const signature = o.device.sign(
    presenceSigningBytes({ contextId: o.contextId, author: o.device.publicKey, seq: BigInt(o.seq), sentAtMs: BigInt(o.sentAtMs), state }),
  );
  return {
    state: state === null ? null : state.toString('hex'),
    seq: o.seq,
    sentAtMs: o.sentAtMs,
    signature: signature.toString('hex'),
    authorProof: encodeDeviceAccountProof(o.proof).toString('hex'),
  };
}
