/**
 * The three warrants of delegated execution (admin spec "Delegated execution"; admin-wire-b §8.6;
 * domain.md §4.7) in the reference's borsh layouts (crate `calimero_account`: `warrant.rs`,
 * `creation.rs`, `governance.rs`). A member's device signs one; a relay node spends it once.
 *
 *   Warrant (intent)        = context ‖ author_account ‖ author_device_key ‖ executor ‖ executor_key ‖
 *                             release_bytecode_id ‖ string release_version ‖ string method ‖ intent_hash ‖
 *                             heads account_heads ‖ heads governance_floor ‖ u64 nonce ‖ u64 not_after ‖ sig(64)
 *   ContextCreationWarrant  = group ‖ seed ‖ author_account ‖ author_device_key ‖ executor ‖ executor_key ‖
 *                             application_id ‖ Option<string> service_name ‖ Option<string> name ‖ init_hash ‖
 *                             heads ‖ heads ‖ u64 nonce ‖ u64 not_after ‖ sig(64)
 *   GovernanceWarrant       = scope ‖ u8 kind (Group 0 | Root 1) ‖ author_account ‖ author_device_key ‖
 *                             executor ‖ executor_key ‖ op_hash ‖ heads ‖ heads ‖ u64 nonce ‖ u64 not_after ‖ sig(64)
 *
 * Each signature is Ed25519 by `author_device_key` over a 32-byte `domain_hash` of every field but
 * the signature, the two head lists each preceded by its u64le count and an optional label as a
 * presence byte then its bytes. The signing and commitment domains are the reference's (the
 * rc.83 intent warrant signs under `calimero.warrant.v2`; `.v1` was the rc.41 layout); the unit
 * tests pin the reference's published vectors (`*_wire_fixture.rs`), signatures included.
 *
 * Decoding bounds untrusted input before any signature work: at most 64 cited heads per list,
 * labels and the release version at most 256 bytes, no trailing bytes. Every decode failure is a
 * 400 naming the field.
 */
import { domainHash, toHex } from '../crypto/ids.ts';
import { ed25519Verify } from '../crypto/keys.ts';
import { badRequest } from '../errors.ts';
import { BorshReader, BorshWriter } from '../codec/borsh.ts';

export const WARRANT_SIGN_DOMAIN = 'calimero.warrant.v2';
export const WARRANT_INTENT_DOMAIN = 'calimero.warrant.intent.v1';
export const CREATION_SIGN_DOMAIN = 'calimero.context-creation-warrant.v1';
export const CREATION_INIT_DOMAIN = 'calimero.context-creation.init.v1';
export const GOVERNANCE_SIGN_DOMAIN = 'calimero.governance-warrant.v1';
export const GOVERNANCE_OP_DOMAIN = 'calimero.governance-warrant.op.v1';

/** `MAX_WARRANT_CITED_HEADS`, per list. */
export const MAX_CITED_HEADS = 64;
/** `MAX_WARRANT_RELEASE_VERSION_LEN` and `MAX_CREATION_LABEL_LEN`, in bytes. */
export const MAX_LABEL_BYTES = 256;
/** A method name travels in the clear; the node's own rule for method names bounds it. */
export const MAX_METHOD_BYTES = 256;

/** The fields every warrant shares (reference `WarrantStatement`). Ids and keys are 64 hex. */
export interface WarrantCommon {
  authorAccount: string;
  authorDeviceKey: string;
  executor: string;
  executorKey: string;
  accountHeads: string[];
  governanceFloor: string[];
  nonce: bigint;
  /** unix seconds */
  notAfter: bigint;
  /** 64 bytes, hex */
  signature: string;
}

export interface IntentWarrant extends WarrantCommon {
  context: string;
  releaseBytecodeId: string;
  releaseVersion: string;
  method: string;
  intentHash: string;
}

export interface CreationWarrant extends WarrantCommon {
  group: string;
  seed: string;
  applicationId: string;
  serviceName: string | null;
  name: string | null;
  initHash: string;
}

export const GOVERNANCE_KINDS = { Group: 0, Root: 1 } as const;
export type GovernanceKind = keyof typeof GOVERNANCE_KINDS;

export interface GovernanceWarrant extends WarrantCommon {
  scope: string;
  kind: GovernanceKind;
  opHash: string;
}

const raw = (hex: string): Buffer => Buffer.from(hex, 'hex');

function u64le(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
}

// ---- commitments ----------------------------------------------------------------------------

/** `Warrant::intent_hash`: `H(method ‖ args)`; `args` are the JSON bytes the guest receives. */
export function intentHash(method: string, args: Uint8Array): string {
  return toHex(domainHash(WARRANT_INTENT_DOMAIN, [Buffer.from(method, 'utf8'), args]));
}

/** `ContextCreationWarrant::init_hash`: the JSON bytes `init` runs with. */
export function initHash(initArgs: Uint8Array): string {
  return toHex(domainHash(CREATION_INIT_DOMAIN, [initArgs]));
}

/** `GovernanceWarrant::op_hash`: `H(kind ‖ delegable op bytes)`. */
export function opHash(kind: GovernanceKind, op: Uint8Array): string {
  return toHex(domainHash(GOVERNANCE_OP_DOMAIN, [Buffer.from([GOVERNANCE_KINDS[kind]]), op]));
}

// ---- signing payloads -----------------------------------------------------------------------

function headParts(w: Pick<WarrantCommon, 'accountHeads' | 'governanceFloor'>): Buffer[] {
  return [u64le(BigInt(w.accountHeads.length)), ...w.accountHeads.map(raw), u64le(BigInt(w.governanceFloor.length)), ...w.governanceFloor.map(raw)];
}

const labelParts = (label: string | null): Buffer[] => (label === null ? [Buffer.from([0]), Buffer.alloc(0)] : [Buffer.from([1]), Buffer.from(label, 'utf8')]);

export function intentSigningPayload(w: Omit<IntentWarrant, 'signature'>): Buffer {
  return domainHash(WARRANT_SIGN_DOMAIN, [
    raw(w.context),
    raw(w.authorAccount),
    raw(w.authorDeviceKey),
    raw(w.executor),
    raw(w.executorKey),
    raw(w.releaseBytecodeId),
    Buffer.from(w.releaseVersion, 'utf8'),
    Buffer.from(w.method, 'utf8'),
    raw(w.intentHash),
    ...headParts(w),
    u64le(w.nonce),
    u64le(w.notAfter),
  ]);
}

export function creationSigningPayload(w: Omit<CreationWarrant, 'signature'>): Buffer {
  return domainHash(CREATION_SIGN_DOMAIN, [
    raw(w.group),
    raw(w.seed),
    raw(w.authorAccount),
    raw(w.authorDeviceKey),
    raw(w.executor),
    raw(w.executorKey),
    raw(w.applicationId),
    ...labelParts(w.serviceName),
    ...labelParts(w.name),
    raw(w.initHash),
    ...headParts(w),
    u64le(w.nonce),
    u64le(w.notAfter),
  ]);
}

export function governanceSigningPayload(w: Omit<GovernanceWarrant, 'signature'>): Buffer {
  return domainHash(GOVERNANCE_SIGN_DOMAIN, [
    raw(w.scope),
    Buffer.from([GOVERNANCE_KINDS[w.kind]]),
    raw(w.authorAccount),
    raw(w.authorDeviceKey),
    raw(w.executor),
    raw(w.executorKey),
    raw(w.opHash),
    ...headParts(w),
    u64le(w.nonce),
    u64le(w.notAfter),
  ]);
}

/** Whether the author device signed the warrant (authenticity of the statement alone). */
export function warrantSignatureValid(w: IntentWarrant | CreationWarrant | GovernanceWarrant): boolean {
  const payload = 'method' in w ? intentSigningPayload(w) : 'seed' in w ? creationSigningPayload(w) : governanceSigningPayload(w);
  return ed25519Verify(w.authorDeviceKey, payload, raw(w.signature));
}

// ---- borsh ----------------------------------------------------------------------------------

function readHeads(r: BorshReader, what: string): string[] {
  const n = r.u32();
  if (n > MAX_CITED_HEADS) throw badRequest(`${what}: ${n} cited heads; at most ${MAX_CITED_HEADS} are allowed`);
  return Array.from({ length: n }, () => r.hex32());
}

function readString(r: BorshReader, what: string, max: number): string {
  const n = r.u32();
  if (n > max) throw badRequest(`${what}: ${n} bytes; at most ${max} are allowed`);
  const bytes = r.fixed(n);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest(`${what}: not UTF-8`);
  }
}

function readOptionalLabel(r: BorshReader, what: string): string | null {
  const tag = r.u8();
  if (tag === 0) return null;
  if (tag !== 1) throw badRequest(`${what}: option tag ${tag} is neither 0 nor 1`);
  return readString(r, what, MAX_LABEL_BYTES);
}

function readTail(r: BorshReader, what: string): Pick<WarrantCommon, 'accountHeads' | 'governanceFloor' | 'nonce' | 'notAfter' | 'signature'> {
  const accountHeads = readHeads(r, `${what}.account_heads`);
  const governanceFloor = readHeads(r, `${what}.governance_floor`);
  const nonce = r.u64();
  const notAfter = r.u64();
  const signature = r.fixed(64).toString('hex');
  r.end();
  return { accountHeads, governanceFloor, nonce, notAfter, signature };
}

function writeTail(w: BorshWriter, x: WarrantCommon): Buffer {
  const heads = (list: string[]) => w.vec(list, (ww, h) => ww.hex32(h));
  heads(x.accountHeads);
  heads(x.governanceFloor);
  return w.u64(x.nonce).u64(x.notAfter).fixed(raw(x.signature), 64).toBuffer();
}

/**
 * The byte length of an rc.41 intent warrant: fixed-width context, author account, author device
 * key, executor, intent hash (5 × 32), u64 nonce and not_after, and a 64-byte signature. It names
 * no executor key and no release, so rc.83 refuses it (admin spec "Delegated execution").
 */
export const RC41_WARRANT_BYTES = 5 * 32 + 8 + 8 + 64;

export function decodeIntentWarrant(bytes: Buffer): IntentWarrant {
  if (bytes.length === RC41_WARRANT_BYTES) {
    throw badRequest('warrant: this is an rc.41 warrant (fixed 240 bytes, no executorKey, releaseBytecodeId or releaseVersion); mint an rc.83 warrant naming them');
  }
  const r = new BorshReader(bytes, 'warrant');
  const context = r.hex32();
  const authorAccount = r.hex32();
  const authorDeviceKey = r.hex32();
  const executor = r.hex32();
  const executorKey = r.hex32();
  const releaseBytecodeId = r.hex32();
  const releaseVersion = readString(r, 'warrant.release_version', MAX_LABEL_BYTES);
  const method = readString(r, 'warrant.method', MAX_METHOD_BYTES);
  const intentHashHex = r.hex32();
  return { context, authorAccount, authorDeviceKey, executor, executorKey, releaseBytecodeId, releaseVersion, method, intentHash: intentHashHex, ...readTail(r, 'warrant') };
}

export function encodeIntentWarrant(w: IntentWarrant): Buffer {
  const out = new BorshWriter()
    .hex32(w.context)
    .hex32(w.authorAccount)
    .hex32(w.authorDeviceKey)
    .hex32(w.executor)
    .hex32(w.executorKey)
    .hex32(w.releaseBytecodeId)
    .string(w.releaseVersion)
    .string(w.method)
    .hex32(w.intentHash);
  return writeTail(out, w);
}

export function decodeCreationWarrant(bytes: Buffer): CreationWarrant {
  const r = new BorshReader(bytes, 'warrant');
  const group = r.hex32();
  const seed = r.hex32();
  const authorAccount = r.hex32();
  const authorDeviceKey = r.hex32();
  const executor = r.hex32();
  const executorKey = r.hex32();
  const applicationId = r.hex32();
  const serviceName = readOptionalLabel(r, 'warrant.service_name');
  const name = readOptionalLabel(r, 'warrant.name');
  const initHashHex = r.hex32();
  return { group, seed, authorAccount, authorDeviceKey, executor, executorKey, applicationId, serviceName, name, initHash: initHashHex, ...readTail(r, 'warrant') };
}

export function encodeCreationWarrant(w: CreationWarrant): Buffer {
  const label = (x: BorshWriter, v: string | null) => x.option(v, (xx, s) => xx.string(s));
  const out = new BorshWriter().hex32(w.group).hex32(w.seed).hex32(w.authorAccount).hex32(w.authorDeviceKey).hex32(w.executor).hex32(w.executorKey).hex32(w.applicationId);
  label(out, w.serviceName);
  label(out, w.name);
  out.hex32(w.initHash);
  return writeTail(out, w);
}

export function decodeGovernanceWarrant(bytes: Buffer): GovernanceWarrant {
  const r = new BorshReader(bytes, 'warrant');
  const scope = r.hex32();
  const tag = r.u8();
  const kind = (Object.keys(GOVERNANCE_KINDS) as GovernanceKind[]).find((k) => GOVERNANCE_KINDS[k] === tag);
  if (!kind) throw badRequest(`warrant.kind: ${tag} is neither Group (0) nor Root (1)`);
  const authorAccount = r.hex32();
  const authorDeviceKey = r.hex32();
  const executor = r.hex32();
  const executorKey = r.hex32();
  const opHashHex = r.hex32();
  return { scope, kind, authorAccount, authorDeviceKey, executor, executorKey, opHash: opHashHex, ...readTail(r, 'warrant') };
}

export function encodeGovernanceWarrant(w: GovernanceWarrant): Buffer {
  const out = new BorshWriter().hex32(w.scope).u8(GOVERNANCE_KINDS[w.kind]).hex32(w.authorAccount).hex32(w.authorDeviceKey).hex32(w.executor).hex32(w.executorKey).hex32(w.opHash);
  return writeTail(out, w);
}

/** Hex text of borsh bytes, as the routes carry it; 400 naming the field otherwise. */
export function hexField(text: string, field: string): Buffer {
  const t = text.trim();
  if (t.length === 0) throw badRequest(`${field} is empty`);
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(t)) throw badRequest(`${field} is not hex`);
  return Buffer.from(t, 'hex');
}
