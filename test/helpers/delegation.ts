/**
 * Minting what a member's device sends to a relay (delegated execution), as a client would: an
 * account (root key → account id), one device certified by it (`AccountProof<DeviceCert>`), and
 * warrants of the three kinds signed by that device, in the reference's layouts.
 */
import { encodeDeviceAccountProof, genesisAccountId } from '../../src/identity/account-proof.ts';
import {
  creationSigningPayload,
  encodeCreationWarrant,
  encodeGovernanceWarrant,
  encodeIntentWarrant,
  governanceSigningPayload,
  initHash,
  intentHash,
  intentSigningPayload,
  opHash,
  type GovernanceKind,
} from '../../src/delegation/warrants.ts';
import { ed25519FromSeed, mintProof, seedOf, type Ed25519 } from './presence.ts';

export interface Member {
  account: string;
  device: Ed25519;
  /** hex of the device's AccountProof<DeviceCert> */
  authorProof: string;
}

/** An account with one device; `seed` picks the keys (root = seed, device = seed + 1). */
export function member(seed: number): Member {
  const root = ed25519FromSeed(seedOf(seed));
  const device = ed25519FromSeed(seedOf(seed + 1));
  const proof = mintProof({ signWithRoot: root.sign, rootPublicKey: root.publicKey, device });
  return { account: genesisAccountId(proof.genesis), device, authorProof: encodeDeviceAccountProof(proof).toString('hex') };
}

export interface Relay {
  executor: string;
  executorKey: string;
}

const HOUR = 3600;
const soon = () => BigInt(Math.floor(Date.now() / 1000) + HOUR);
const json = (v: unknown) => Buffer.from(JSON.stringify(v ?? {}));

export function intentWarrant(
  m: Member,
  t: Relay & { context: string; releaseBytecodeId: string; releaseVersion: string; method: string; args?: unknown; nonce: bigint; notAfter?: bigint; sign?: Member },
): string {
  const terms = {
    context: t.context,
    authorAccount: m.account,
    authorDeviceKey: m.device.publicKey,
    executor: t.executor,
    executorKey: t.executorKey,
    releaseBytecodeId: t.releaseBytecodeId,
    releaseVersion: t.releaseVersion,
    method: t.method,
    intentHash: intentHash(t.method, json(t.args)),
    accountHeads: [],
    governanceFloor: [],
    nonce: t.nonce,
    notAfter: t.notAfter ?? soon(),
  };
  const signer = (t.sign ?? m).device;
  return encodeIntentWarrant({ ...terms, signature: signer.sign(intentSigningPayload(terms)).toString('hex') }).toString('hex');
}

export function creationWarrant(
  m: Member,
  t: Relay & { group: string; seed: string; applicationId: string; name?: string; initArgs?: unknown; nonce: bigint; notAfter?: bigint },
): string {
  const terms = {
    group: t.group,
    seed: t.seed,
    authorAccount: m.account,
    authorDeviceKey: m.device.publicKey,
    executor: t.executor,
    executorKey: t.executorKey,
    applicationId: t.applicationId,
    serviceName: null,
    name: t.name ?? null,
    initHash: initHash(json(t.initArgs)),
    accountHeads: [],
    governanceFloor: [],
    nonce: t.nonce,
    notAfter: t.notAfter ?? soon(),
  };
  return encodeCreationWarrant({ ...terms, signature: m.device.sign(creationSigningPayload(terms)).toString('hex') }).toString('hex');
}

/** The delegable form of a hearth governance op (src/delegation/delegable.ts). */
export function delegableOp(op: { kind: string; groupId?: string; body: Record<string, unknown> }): Buffer {
  return Buffer.from(JSON.stringify(op));
}

export function governanceWarrant(m: Member, t: Relay & { scope: string; kind: GovernanceKind; op: Buffer; nonce: bigint; notAfter?: bigint }): string {
  const terms = {
    scope: t.scope,
    kind: t.kind,
    authorAccount: m.account,
    authorDeviceKey: m.device.publicKey,
    executor: t.executor,
    executorKey: t.executorKey,
    opHash: opHash(t.kind, t.op),
    accountHeads: [],
    governanceFloor: [],
    nonce: t.nonce,
    notAfter: t.notAfter ?? soon(),
  };
  return encodeGovernanceWarrant({ ...terms, signature: m.device.sign(governanceSigningPayload(terms)).toString('hex') }).toString('hex');
}
