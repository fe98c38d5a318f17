/**
 * The signed invitation (admin-wire-b §2.7; domain.md §4.5): `SignedGroupOpenInvitation` in the
 * reference's snake_case shape, 32-byte values as arrays of 32 integers, `admitters` as hex. The
 * inviter's signing key signs SHA-256(borsh(invitation body)); the verifier re-encodes the parsed
 * body, so any change to a signed key breaks the signature.
 */
import { createHash } from 'node:crypto';
import { parseId } from '../../crypto/ids.ts';
import { ed25519Verify } from '../../crypto/keys.ts';
import { badRequest } from '../../errors.ts';
import { BorshWriter } from '../../codec/borsh.ts';
import type { InvitationBody, SignedGroupOpenInvitation } from '../../wire/invitations.ts';

export type SignedInvitation = SignedGroupOpenInvitation;

export const INVITED_ROLES = ['Admin', 'Member', 'ReadOnly'] as const;

export const bytes32 = (hex: string): number[] => [...Buffer.from(hex, 'hex')];
export const hexOf = (arr: number[]): string => Buffer.from(arr).toString('hex');

export function invitationBorsh(b: InvitationBody): Buffer {
  return new BorshWriter()
    .fixed(Buffer.from(b.inviter_identity), 32)
    .fixed(Buffer.from(b.group_id), 32)
    .u64(b.expiration_timestamp)
    .fixed(Buffer.from(b.secret_salt), 32)
    .u8(b.invited_role)
    .vec(b.admitters, (w, a) => w.hex32(a))
    .toBuffer();
}

/** SHA-256 of the borsh body: what the inviter signs, and the invitation's identity for single use. */
export const invitationHash = (b: InvitationBody): Buffer => createHash('sha256').update(invitationBorsh(b)).digest();

const isBytes32 = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length === 32 && v.every((x) => Number.isInteger(x) && x >= 0 && x <= 255);

/** Checks the JSON shape (400 naming the field); the signature is checked by `verifyInvitation`. */
export function parseInvitation(raw: unknown): SignedInvitation {
  const bad = (what: string) => badRequest(`invalid invitation: ${what}`);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('expected a SignedGroupOpenInvitation object');
  const s = raw as Record<string, unknown>;
  const b = s.invitation as Record<string, unknown> | undefined;
  if (!b || typeof b !== 'object') throw bad('missing `invitation`');
  for (const k of ['inviter_identity', 'group_id', 'secret_salt'] as const) if (!isBytes32(b[k])) throw bad(`\`${k}\` must be an array of 32 bytes`);
  if (!Number.isSafeInteger(b.expiration_timestamp) || (b.expiration_timestamp as number) < 0) throw bad('`expiration_timestamp` must be unix seconds');
  if (![0, 1, 2].includes(b.invited_role as number)) throw bad('`invited_role` must be 0, 1 or 2');
  if (!Array.isArray(b.admitters) || !b.admitters.every((a) => typeof a === 'string' && parseId(a))) throw bad('`admitters` must be a list of 64-hex accounts');
  if (typeof s.inviter_signature !== 'string' || !/^[0-9a-fA-F]{128}$/.test(s.inviter_signature)) throw bad('`inviter_signature` must be 64 bytes of hex');
  const account = typeof s.inviter_account === 'string' ? parseId(s.inviter_account) : undefined;
  return {
    invitation: {
      inviter_identity: b.inviter_identity as number[],
      group_id: b.group_id as number[],
      expiration_timestamp: b.expiration_timestamp as number,
      secret_salt: b.secret_salt as number[],
      invited_role: b.invited_role as number,
      admitters: (b.admitters as string[]).map((a) => parseId(a)!),
    },
    inviter_signature: s.inviter_signature.toLowerCase(),
    ...(account ? { inviter_account: account } : {}),
    ...(Array.isArray(s.admitter_addrs) ? { admitter_addrs: s.admitter_addrs.filter((a): a is string => typeof a === 'string') } : {}),
    ...(isBytes32(s.application_id) ? { application_id: s.application_id } : {}),
    ...(isBytes32(s.app_key) ? { app_key: s.app_key } : {}),
  };
}

export function signatureValid(s: SignedInvitation): boolean {
  return ed25519Verify(hexOf(s.invitation.inviter_identity), invitationHash(s.invitation), Buffer.from(s.inviter_signature, 'hex'));
}
