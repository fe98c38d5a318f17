/**
 * A namespace invitation as one string a person can copy (issue #25 §3 and §4): the invitation
 * object's JSON in base64url, no prefix — the same compact form `hearth namespace invite` prints and
 * `hearth namespace join` accepts. A pasted raw JSON object is accepted too. The object is carried
 * verbatim (its `invitation` body is signed: a key added or dropped breaks the signature), with u64
 * numbers kept exact by the SDK's codec.
 */
import { parseJson, stringifyJson, type SignedGroupOpenInvitation } from '../../../src/client/index.ts';

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new Error('not base64url');
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The invitation as one line: `base64url(JSON.stringify(invitation))`. */
export function encodeInvitation(invitation: SignedGroupOpenInvitation): string {
  return toBase64Url(new TextEncoder().encode(stringifyJson(invitation)));
}

export interface DecodedInvitation {
  invitation: SignedGroupOpenInvitation;
  /** the namespace (root group) it admits to, hex */
  namespaceId: string;
  /** unix seconds */
  expiresAt: number;
  role: number;
}

const isBytes = (v: unknown, n?: number): v is number[] => Array.isArray(v) && (n === undefined || v.length === n) && v.every((b) => Number.isInteger(b) && b >= 0 && b <= 255);
const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');

/**
 * Reads a pasted invitation (the compact string, or the JSON object); throws an Error saying what
 * is wrong with it in words a person can act on.
 */
export function decodeInvitation(pasted: string): DecodedInvitation {
  const text = pasted.trim();
  if (text === '') throw new Error('paste an invitation first');
  let value: unknown;
  if (text.startsWith('{')) {
    try {
      value = parseJson(text);
    } catch {
      throw new Error('the pasted text starts like JSON but is not valid JSON');
    }
  } else {
    let json: string;
    try {
      json = new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(text.replace(/\s+/g, '')));
      value = parseJson(json);
    } catch {
      throw new Error('this is not an invitation: expected the one-line string `hearth namespace invite` prints (or the invitation JSON)');
    }
  }
  const inv = value as Partial<SignedGroupOpenInvitation> | null;
  const body = inv && typeof inv === 'object' ? inv.invitation : undefined;
  if (!body || typeof body !== 'object' || typeof inv!.inviter_signature !== 'string') {
    throw new Error('this is not an invitation: it has no signed `invitation` body');
  }
  if (!isBytes(body.group_id, 32)) throw new Error('the invitation names no namespace (group_id)');
  return {
    invitation: inv as SignedGroupOpenInvitation,
    namespaceId: hex(body.group_id),
    expiresAt: Number(body.expiration_timestamp),
    role: Number(body.invited_role),
  };
}
