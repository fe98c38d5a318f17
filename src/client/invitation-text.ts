/**
 * Invitations as one line of text (issue #25 §3, §4): `inv1.` followed by the base64url of the
 * invitation's JSON with its id fields as hex — the form `hearth namespace invite` prints and
 * `join` (CLI and dashboard) takes. Browser-safe: `TextEncoder`, `btoa`/`atob` only.
 */
export const INVITATION_TEXT_PREFIX = 'inv1.';

/** Byte fields of an invitation that are ids or keys: hex in the text, byte arrays on the wire. */
const HEX_FIELDS = new Set(['inviter_identity', 'group_id', 'secret_salt', 'application_id', 'app_key', 'context_id', 'public_key']);

const isBytes = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((b) => Number.isInteger(b) && b >= 0 && b < 256);

function mapFields(value: unknown, f: (key: string, v: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => mapFields(v, f));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, HEX_FIELDS.has(k) ? f(k, v) : mapFields(v, f)]));
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** An invitation (or `{invitation, groupName}`, or a recursive list) as one `inv1.` line. */
export function invitationToText(value: unknown): string {
  const shown = mapFields(value, (_k, v) => (isBytes(v) ? v.map((b) => b.toString(16).padStart(2, '0')).join('') : v));
  return `${INVITATION_TEXT_PREFIX}${toBase64Url(new TextEncoder().encode(JSON.stringify(shown)))}`;
}

/** The value an `inv1.` line holds, id fields back as byte arrays; throws on anything else. */
export function invitationFromText(text: string): unknown {
  const t = text.trim();
  if (!t.startsWith(INVITATION_TEXT_PREFIX) || !/^[A-Za-z0-9_-]+$/.test(t.slice(INVITATION_TEXT_PREFIX.length))) {
    throw new Error('not an invitation: expected the inv1.… line that "Invite" (or hearth namespace invite) gives');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(fromBase64Url(t.slice(INVITATION_TEXT_PREFIX.length))));
  } catch {
    throw new Error('not an invitation: the inv1. line is cut or changed (copy it whole)');
  }
  return mapFields(parsed, (_k, v) => (typeof v === 'string' && /^([0-9a-f]{2})+$/i.test(v) ? Array.from(v.match(/../g)!, (h) => parseInt(h, 16)) : v));
}
