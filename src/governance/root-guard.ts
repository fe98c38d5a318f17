/**
 * The root guard of owner operations (admin-wire-b §5; admin spec "Authentication" rule 4): a
 * root-guarded op carries a `rootProof`, the hex of borsh `SignedOwnerOp` (= `AccountProof<
 * OwnerOpAuthorization>`, §5.2), signed by the acting account's root key and naming the namespace,
 * the group, the op kind, a digest of the op's borsh bytes and the group's current
 * `ownerOpCounter` (§5.3). Pure functions: the service calls `rootGuard` (which also mints the proof
 * when this node holds the account's root), and appliers call `verifyRootProof` again so an op
 * replicated from elsewhere is checked the same way. After a root rotation the proof carries the
 * handoff chain from the genesis key to the signing epoch (`signerOf`). Typed refusals (§5.4):
 * empty/undecodable/invalid/mismatched proof, broken chain, epoch below the recorded one → 400;
 * proof required, wrong account → 403; stale counter → 409.
 */
import { AccountProofError, rootKeyAtEpoch } from '../identity/account-proof.ts';
import type { NodeIdentity } from '../identity/identity.ts';
import { accountIdOf, domainHash, isHexBytes, toHex } from '../crypto/ids.ts';
import { ed25519Verify } from '../crypto/keys.ts';
import { badRequest, conflict, forbidden } from '../errors.ts';
import { BorshReader, BorshWriter } from '../codec/borsh.ts';
import type { GroupState, NamespaceState } from './types.ts';

/** `OwnerOpKind` discriminants (§5.2). */
export const OWNER_OP_KIND = {
  TransferOwnership: 0,
  AdminChanged: 1,
  GroupDelete: 2,
  TeeAdmissionPolicy: 3,
  TeeAuthoringPolicy: 4,
  TeeReleaseAdmissionPolicy: 5,
} as const;
export type OwnerOpKind = keyof typeof OWNER_OP_KIND;

const ACCOUNT_GENESIS_VERSION = 2;
const OP_BODY_DOMAIN = 'calimero.account.owner-op.body.v1';
const OP_DOMAIN = 'calimero.account.owner-op.v1';
export const EMPTY_ROOT_PROOF_MESSAGE = 'rootProof: empty; omit the field entirely if you have no proof';

export interface OwnerOpAuthorization {
  account: string;
  namespaceId: string;
  groupId: string;
  kind: number;
  /** hex of the 32-byte digest of borsh(op) */
  opDigest: string;
  counter: bigint;
  keyEpoch: number;
}

export interface RootKeyHandoff {
  account: string;
  fromEpoch: number;
  newRootKey: string;
  signature: string;
}

export interface SignedOwnerOp {
  /** the epoch-0 root public key (AccountGenesis v2) */
  rootKey: string;
  handoffs: RootKeyHandoff[];
  auth: OwnerOpAuthorization;
  /** Ed25519 by the epoch-`keyEpoch` root key, hex */
  signature: string;
}

/** `op_digest` = domain_hash("calimero.account.owner-op.body.v1", [borsh(op)]). */
export function opDigestOf(opBorsh: Uint8Array): string {
  return toHex(domainHash(OP_BODY_DOMAIN, [opBorsh]));
}

/** The bytes the root key signs (§5.2). */
export function ownerOpMessage(a: OwnerOpAuthorization): Buffer {
  const kind = Buffer.from([a.kind]);
  const counter = new BorshWriter().u64(a.counter).toBuffer();
  const epoch = new BorshWriter().u32(a.keyEpoch).toBuffer();
  const h = (x: string) => Buffer.from(x, 'hex');
  return domainHash(OP_DOMAIN, [h(a.account), h(a.namespaceId), h(a.groupId), kind, h(a.opDigest), counter, epoch]);
}

export function encodeSignedOwnerOp(p: SignedOwnerOp): string {
  const w = new BorshWriter().u8(ACCOUNT_GENESIS_VERSION).hex32(p.rootKey);
  w.vec(p.handoffs, (w2, h) => w2.hex32(h.account).u32(h.fromEpoch).hex32(h.newRootKey).fixed(Buffer.from(h.signature, 'hex'), 64));
  const a = p.auth;
  w.hex32(a.account).hex32(a.namespaceId).hex32(a.groupId).u8(a.kind).hex32(a.opDigest).u64(a.counter).u32(a.keyEpoch);
  w.fixed(Buffer.from(p.signature, 'hex'), 64);
  return w.toBuffer().toString('hex');
}

export function decodeSignedOwnerOp(hex: string): SignedOwnerOp {
  const r = new BorshReader(Buffer.from(hex, 'hex'), 'rootProof does not decode as a SignedOwnerOp');
  const version = r.u8();
  if (version !== ACCOUNT_GENESIS_VERSION) throw badRequest(`rootProof: unsupported account genesis version ${version}`);
  const rootKey = r.hex32();
  const n = r.u32();
  if (n > 1024) throw badRequest('rootProof: root key handoff chain longer than 1024');
  const handoffs: RootKeyHandoff[] = [];
  for (let i = 0; i < n; i++) {
    handoffs.push({ account: r.hex32(), fromEpoch: r.u32(), newRootKey: r.hex32(), signature: r.fixed(64).toString('hex') });
  }
  const auth: OwnerOpAuthorization = {
    account: r.hex32(),
    namespaceId: r.hex32(),
    groupId: r.hex32(),
    kind: r.u8(),
    opDigest: r.hex32(),
    counter: r.u64(),
    keyEpoch: r.u32(),
  };
  const signature = r.fixed(64).toString('hex');
  r.end();
  return { rootKey, handoffs, auth, signature };
}

/** A proof signed by a root key held in memory (this node's root, or a test's stranger root). */
export function signOwnerOp(rootKey: string, sign: (msg: Buffer) => string, auth: OwnerOpAuthorization): string {
  return encodeSignedOwnerOp({ rootKey, handoffs: [], auth, signature: sign(ownerOpMessage(auth)) });
}

/** Validates the wire field: absent stays absent; empty or non-hex is a 400 (§5.1). */
export function parseRootProofField(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw === '') throw badRequest(EMPTY_ROOT_PROOF_MESSAGE);
  if (!isHexBytes(raw)) throw badRequest('rootProof: expected hex-encoded borsh SignedOwnerOp');
  return raw.toLowerCase();
}

export interface RootProofCheck {
  ns: NamespaceState;
  /** the group whose counter the proof names (the namespace root for AdminChanged and TEE policies) */
  group: GroupState;
  kind: OwnerOpKind;
  /** hex digest of the op's borsh bytes (`opDigestOf`) */
  opDigest: string;
  /** the account whose root must sign: the owner for owner ops, the acting admin for TEE policies */
  account: string;
  rootProof: string;
}

/**
 * The root key that signs at the proof's `keyEpoch`: the genesis key walked through the handoff
 * chain, each handoff signed by the key before it (the `AccountProof` rule shared with device
 * certificates, identity/account-proof.ts). A broken chain is a 400.
 */
export function signerOf(p: SignedOwnerOp): string {
  const chain = p.handoffs.map((h) => ({ account: h.account, fromEpoch: h.fromEpoch, newRootSignPk: h.newRootKey, signature: Buffer.from(h.signature, 'hex') }));
  try {
    return rootKeyAtEpoch({ genesis: { version: ACCOUNT_GENESIS_VERSION, rootSignPk: p.rootKey }, chain }, p.auth.account, p.auth.keyEpoch);
  } catch (err) {
    if (err instanceof AccountProofError) throw badRequest(`rootProof: ${err.message}`);
    throw err;
  }
}

/**
 * Verifies a proof against the state; throws the typed refusal (§5.4). Pure. After a root
 * rotation the proof carries the handoff chain to the signing epoch; an epoch below the one the
 * namespace has recorded for the account is refused (admin spec "Errors": a rotated-out key no
 * longer signs).
 */
export function verifyRootProof(c: RootProofCheck): SignedOwnerOp {
  const p = decodeSignedOwnerOp(parseRootProofField(c.rootProof)!);
  if (accountIdOf(Buffer.from(p.rootKey, 'hex')) !== p.auth.account) throw badRequest('rootProof: the account does not derive from the root key in the proof');
  if (p.auth.account !== c.account) {
    throw forbidden(`root proof is signed by account ${p.auth.account}, but this op needs the root of account ${c.account}`);
  }
  const recordedEpoch = c.ns.accountRootEpochs?.[p.auth.account] ?? 0;
  if (p.auth.keyEpoch < recordedEpoch) {
    throw badRequest(`rootProof: signed at root key epoch ${p.auth.keyEpoch}, below epoch ${recordedEpoch} recorded for account ${p.auth.account}`);
  }
  const signer = signerOf(p);
  if (!ed25519Verify(signer, ownerOpMessage(p.auth), Buffer.from(p.signature, 'hex'))) throw badRequest('rootProof: invalid root signature');
  if (p.auth.namespaceId !== c.ns.id) throw badRequest(`rootProof names namespace ${p.auth.namespaceId}, not ${c.ns.id}`);
  if (p.auth.groupId !== c.group.id) throw badRequest(`rootProof names group ${p.auth.groupId}, not ${c.group.id}`);
  if (p.auth.kind !== OWNER_OP_KIND[c.kind]) throw badRequest(`rootProof authorizes op kind ${p.auth.kind}, not ${c.kind} (${OWNER_OP_KIND[c.kind]})`);
  if (p.auth.opDigest !== c.opDigest) throw badRequest('rootProof: op digest does not match the requested op');
  const expected = BigInt(c.group.ownerOpCounter);
  if (p.auth.counter !== expected) throw conflict(`stale owner-op counter: expected ${expected}, got ${p.auth.counter}`);
  return p;
}

/**
 * The service-side guard: with no proof, a node that holds `account`'s root signs one itself
 * (naming the current counter); otherwise 403. Returns the verified proof hex to carry in the op.
 */
export function rootGuard(c: Omit<RootProofCheck, 'rootProof'> & { rootProof?: string; identity: NodeIdentity }): string {
  let proof = parseRootProofField(c.rootProof);
  if (proof === undefined) {
    if (c.identity.accountId !== c.account) {
      throw forbidden(`root proof required: this node does not hold the root key of account ${c.account}`);
    }
    proof = signOwnerOp(c.identity.rootPublicKey, (m) => c.identity.signWithRoot(m), {
      account: c.account,
      namespaceId: c.ns.id,
      groupId: c.group.id,
      kind: OWNER_OP_KIND[c.kind],
      opDigest: c.opDigest,
      counter: BigInt(c.group.ownerOpCounter),
      keyEpoch: 0,
    });
  }
  verifyRootProof({ ...c, rootProof: proof });
  return proof;
}

/** Applying a root-guarded op advances the group's counter by exactly one (§5.3). */
export function advanceOwnerOpCounter(group: GroupState): void {
  group.ownerOpCounter = (BigInt(group.ownerOpCounter) + 1n).toString();
}
