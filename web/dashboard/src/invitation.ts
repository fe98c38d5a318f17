/**
 * A namespace invitation as one string a person can copy (issue #25 §3 and §4): the SDK's `inv1.`
 * line (src/client/invitation-text.ts) — the same form `hearth namespace invite` prints and
 * `hearth namespace join` accepts. A pasted raw JSON object, or the bare base64url of the JSON, is
 * accepted too. The object is carried
 * verbatim (its `invitation` body is signed: a key added or dropped breaks the signature), with u64
 * numbers kept exact by the SDK's codec.
 */
import { INVITATION_TEXT_PREFIX, invitationFromText, invitationToText, parseJson, type SignedGroupOpenInvitation } from '../../../src/client/index.ts';

function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new Error('not base64url');
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The invitation as one `inv1.` line, as the CLI prints it. */
export function encodeInvitation(invitation: SignedGroupOpenInvitation): string {
  return invitationToText(invitation);
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
  if (text.startsWith(INVITATION_TEXT_PREFIX)) {
    try {
      value = invitationFromText(text.replace(/\s+/g, ''));
    } catch {
      throw new Error('this `inv1.` line is damaged: copy it again, whole');
    }
    const v = value as { invitation?: unknown } | null;
    // the CLI's `invite` line may hold `{invitation, groupName}`: take the signed invitation inside
    if (v && typeof v === 'object' && v.invitation && typeof v.invitation === 'object' && 'invitation' in (v.invitation as object)) value = v.invitation;
  } else if (text.startsWith('{')) {
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
