/**
 * The reference's self-contained device credential, `AccountProof<DeviceCert>` (crate
 * `calimero_account`: `signed.rs`, `account.rs`, `root_key.rs`, `device.rs`), in its borsh layout.
 * Clients mint it (mero-js `signDeviceCert`) and send it as `authorProof` to the delegated routes,
 * so hearth reads exactly these bytes. hearth's own link credential (`credentials.ts`) is a
 * different layout and is not accepted here.
 *
 *   AccountProof   = genesis ‖ chain ‖ statement
 *   genesis        = u8 version (2) ‖ root_sign_pk(32)
 *   chain          = u32le n ‖ n × RootKeyHandoff            (n ≤ 1024)
 *   RootKeyHandoff = account(32) ‖ u32le from_epoch ‖ new_root_sign_pk(32) ‖ sig(64)
 *   DeviceCert     = account(32) ‖ device(32) ‖ sign_pk(32) ‖ kem_pk(32) ‖ u32le key_epoch ‖ u32le device_epoch ‖ sig(64)
 *
 * Verification (`AccountProof::verify(statement.account)`): the genesis derives the account
 * (`domain_hash("calimero.account.genesis.v1", [borsh(genesis)])`), the certificate names it, the
 * handoff chain walks from the genesis key to the certificate's `key_epoch` (each handoff signed by
 * the outgoing key over `domain_hash("calimero.account.handoff.v1", [account, u32le from, new pk])`,
 * contiguous from epoch 0, entries past the epoch ignored), and the key at that epoch signed
 * `domain_hash("calimero.device.cert.v1", [account, device, sign_pk, kem_pk, u32le key_epoch,
 * u32le device_epoch])`.
 */
import { domainHash, toHex } from '../crypto/ids.ts';
import { ed25519Verify } from '../crypto/keys.ts';

/** `ACCOUNT_GENESIS_VERSION`: 2 since the genesis dropped its nonce. */
export const ACCOUNT_GENESIS_VERSION = 2;
/** `MAX_ROOT_KEY_HANDOFFS`: bounds the signature checks untrusted bytes can demand. */
export const MAX_ROOT_KEY_HANDOFFS = 1024;

const HANDOFF_BYTES = 32 + 4 + 32 + 64;
const CERT_BYTES = 32 * 4 + 4 + 4 + 64;

export interface RootKeyHandoff {
  account: string;
  fromEpoch: number;
  newRootSignPk: string;
  signature: Uint8Array;
}

export interface DeviceCert {
  account: string;
  device: string;
  signPk: string;
  kemPk: string;
  keyEpoch: number;
  deviceEpoch: number;
  signature: Uint8Array;
}

export interface DeviceAccountProof {
  genesis: { version: number; rootSignPk: string };
  chain: RootKeyHandoff[];
  statement: DeviceCert;
}

/** Why a proof does not decode or does not verify; the message is safe to show the caller. */
export class AccountProofError extends Error {
  override name = 'AccountProofError';
}

class Reader {
  private pos = 0;
  constructor(private readonly b: Uint8Array) {}

  take(n: number, what: string): Uint8Array {
    if (this.pos + n > this.b.length) throw new AccountProofError(`truncated at ${what} (byte ${this.pos} of ${this.b.length})`);
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  u32(what: string): number {
    const s = this.take(4, what);
    return (s[0] | (s[1] << 8) | (s[2] << 16) | (s[3] << 24)) >>> 0;
  }

  hex32(what: string): string {
    return toHex(this.take(32, what));
  }

  end(): void {
    if (this.pos !== this.b.length) throw new AccountProofError(`${this.b.length - this.pos} unexpected bytes after the certificate`);
  }
}

/** Decodes borsh `AccountProof<DeviceCert>`; throws {@link AccountProofError}. Does not verify. */
export function decodeDeviceAccountProof(bytes: Uint8Array): DeviceAccountProof {
  const r = new Reader(bytes);
  const version = r.take(1, 'genesis.version')[0];
  const rootSignPk = r.hex32('genesis.root_sign_pk');
  const n = r.u32('chain length');
  if (n > MAX_ROOT_KEY_HANDOFFS) throw new AccountProofError(`the handoff chain has ${n} entries; at most ${MAX_ROOT_KEY_HANDOFFS} are allowed`);
  // Check the length before allocating: n comes from untrusted bytes.
  if (bytes.length < 37 + n * HANDOFF_BYTES + CERT_BYTES) throw new AccountProofError(`truncated: ${n} handoffs and a certificate need more than ${bytes.length} bytes`);
  const chain: RootKeyHandoff[] = [];
  for (let i = 0; i < n; i++) {
    chain.push({
      account: r.hex32(`chain[${i}].account`),
      fromEpoch: r.u32(`chain[${i}].from_epoch`),
      newRootSignPk: r.hex32(`chain[${i}].new_root_sign_pk`),
      signature: r.take(64, `chain[${i}].signature`),
    });
  }
  const statement: DeviceCert = {
    account: r.hex32('statement.account'),
    device: r.hex32('statement.device'),
    signPk: r.hex32('statement.sign_pk'),
    kemPk: r.hex32('statement.kem_pk'),
    keyEpoch: r.u32('statement.key_epoch'),
    deviceEpoch: r.u32('statement.device_epoch'),
    signature: r.take(64, 'statement.signature'),
  };
  r.end();
  return { genesis: { version, rootSignPk }, chain, statement };
}

const u32le = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const raw = (hex: string): Buffer => Buffer.from(hex, 'hex');

/** `AccountGenesis::account_id`. */
export function genesisAccountId(genesis: DeviceAccountProof['genesis']): string {
  return toHex(domainHash('calimero.account.genesis.v1', [Buffer.concat([Buffer.from([genesis.version]), raw(genesis.rootSignPk)])]));
}

/** `DeviceCert::signing_payload`: what the root key at `keyEpoch` signs. */
export function deviceCertPayload(c: Omit<DeviceCert, 'signature'>): Buffer {
  return domainHash('calimero.device.cert.v1', [raw(c.account), raw(c.device), raw(c.signPk), raw(c.kemPk), u32le(c.keyEpoch), u32le(c.deviceEpoch)]);
}

/** `RootKeyHandoff::signing_payload`: what the outgoing root key signs. */
export function handoffPayload(h: Omit<RootKeyHandoff, 'signature'>): Buffer {
  return domainHash('calimero.account.handoff.v1', [raw(h.account), u32le(h.fromEpoch), raw(h.newRootSignPk)]);
}

/**
 * `root_key_at_epoch`: the root key in force at `epoch`, walking the chain from the genesis key.
 * Shared by every `AccountProof<T>` (device certificates here, owner-op authorizations in
 * governance/root-guard.ts); throws {@link AccountProofError}.
 */
export function rootKeyAtEpoch(proof: Pick<DeviceAccountProof, 'genesis' | 'chain'>, account: string, epoch: number): string {
  const { genesis, chain } = proof;
  if (genesis.version !== ACCOUNT_GENESIS_VERSION) {
    throw new AccountProofError(`unsupported account genesis version ${genesis.version} (supported: ${ACCOUNT_GENESIS_VERSION})`);
  }
  if (epoch > chain.length) throw new AccountProofError(`key epoch ${epoch} is beyond the ${chain.length} handoffs the chain reaches`);
  let current = genesis.rootSignPk;
  for (let i = 0; i < epoch; i++) {
    const h = chain[i];
    if (h.fromEpoch !== i) throw new AccountProofError(`the handoff chain is not contiguous: expected epoch ${i}, found ${h.fromEpoch}`);
    if (h.account !== account) throw new AccountProofError(`handoff ${i} is for another account`);
    if (!ed25519Verify(current, handoffPayload(h), h.signature)) throw new AccountProofError(`handoff ${i} is not signed by the root key at epoch ${i}`);
    current = h.newRootSignPk;
  }
  return current;
}

/**
 * `AccountProof::verify(claimedAccount)`: internal validity only (not whether the device is revoked
 * or the account a member anywhere). Returns the certificate; throws {@link AccountProofError}.
 */
export function verifyDeviceAccountProof(proof: DeviceAccountProof, claimedAccount: string = proof.statement.account): DeviceCert {
  const derived = genesisAccountId(proof.genesis);
  if (derived !== claimedAccount) throw new AccountProofError(`the genesis derives account ${derived}, not ${claimedAccount}`);
  const cert = proof.statement;
  if (cert.account !== derived) throw new AccountProofError('the certificate names another account than its genesis');
  const signer = rootKeyAtEpoch(proof, derived, cert.keyEpoch);
  if (!ed25519Verify(signer, deviceCertPayload(cert), cert.signature)) {
    throw new AccountProofError('the certificate is not signed by the account root key at its epoch');
  }
  return cert;
}

/** Borsh-encodes a proof (the inverse of {@link decodeDeviceAccountProof}), for minting clients and tests. */
export function encodeDeviceAccountProof(p: DeviceAccountProof): Buffer {
  const c = p.statement;
  return Buffer.concat([
    Buffer.from([p.genesis.version]),
    raw(p.genesis.rootSignPk),
    u32le(p.chain.length),
    ...p.chain.flatMap((h) => [raw(h.account), u32le(h.fromEpoch), raw(h.newRootSignPk), Buffer.from(h.signature)]),
    raw(c.account),
    raw(c.device),
    raw(c.signPk),
    raw(c.kemPk),
    u32le(c.keyEpoch),
    u32le(c.deviceEpoch),
    Buffer.from(c.signature),
  ]);
}
