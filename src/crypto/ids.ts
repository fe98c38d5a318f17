/**
 * Ids and hashes of the domain model (admin-wire-b §1.1, §1.7; domain.md §3.1): the reference's
 * `domain_hash`, account/device/namespace/subgroup id derivations, and the wire encoding of ids
 * (64 lowercase hex; base58 of 32 bytes accepted on input from older clients).
 */
import { createHash } from 'node:crypto';
import { badRequest } from '../errors.ts';

function u64le(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

/** SHA-256(u64le(len(domain)) ‖ domain ‖ Σ u64le(len(part)) ‖ part). */
export function domainHash(domain: string, parts: Uint8Array[]): Buffer {
  const h = createHash('sha256');
  const d = Buffer.from(domain, 'utf8');
  h.update(u64le(d.length)).update(d);
  for (const p of parts) h.update(u64le(p.length)).update(p);
  return h.digest();
}

export const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Non-empty hex of whole bytes (even length, any case). */
export const isHexBytes = (s: string): boolean => /^(?:[0-9a-fA-F]{2})+$/.test(s);

/** AccountId = domain_hash("calimero.account.genesis.v1", [0x02 ‖ root public key]). */
export function accountIdOf(rootPublicKey: Uint8Array): string {
  return toHex(domainHash('calimero.account.genesis.v1', [Buffer.concat([Buffer.from([2]), rootPublicKey])]));
}

export function deviceIdOf(accountId: string, random16: Uint8Array): string {
  return toHex(domainHash('calimero.device.id.v1', [Buffer.from(accountId, 'hex'), random16]));
}

export function namespaceIdOf(founderAccountId: string, salt: string): string {
  return toHex(domainHash('calimero.namespace.id.v1', [Buffer.from(founderAccountId, 'hex'), Buffer.from(salt, 'hex')]));
}

export function subgroupIdOf(admin: string, parent: string, restricted: boolean, salt: string): string {
  return toHex(
    domainHash('calimero.subgroup.id.v1', [
      Buffer.from(admin, 'hex'),
      Buffer.from(parent, 'hex'),
      Buffer.from([restricted ? 1 : 0]),
      Buffer.from(salt, 'hex'),
    ]),
  );
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58To32(s: string): Buffer | undefined {
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s)) return undefined;
  let n = 0n;
  for (const c of s) n = n * 58n + BigInt(B58.indexOf(c));
  let hex = n === 0n ? '' : n.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  const body = Buffer.from(hex, 'hex');
  const zeros = s.length - s.replace(/^1+/, '').length;
  const out = Buffer.concat([Buffer.alloc(zeros), body]);
  return out.length === 32 ? out : undefined;
}

/** A 32-byte id from the wire: 64 hex (any case) or base58; undefined when neither. */
export function parseId(s: string): string | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(s)) return s.toLowerCase();
  const b = base58To32(s);
  return b ? toHex(b) : undefined;
}

/** Parses an id or answers 400 naming what was expected. */
export function requireId(s: string, what: string): string {
  const id = parseId(s);
  if (!id) throw badRequest(`Invalid ${what}: expected hex-encoded 32 bytes`);
  return id;
}
