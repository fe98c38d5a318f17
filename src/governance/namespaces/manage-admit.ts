/**
 * Direct admission (admin spec "Namespaces" admit; admin-wire-b §2.10; domain.md §4.5): a keyholder
 * without a node signs its own join statement offline with its device key and hands it, with its
 * invitation, to a node named in the invitation's `admitters`. That node verifies everything that is
 * verifiable from the bytes and the namespace state, then writes a `namespace.admitted` op carrying
 * both, which every node re-checks when applying it. An admitter can refuse to publish; it cannot
 * change the admission.
 *
 * `signedOp` (hearth's layout; the reference's borsh `SignedNamespaceOp` is unspecified) is the hex
 * of the UTF-8 JSON `{statement, credential, signature}`: `statement` = `{kind: "MemberJoined",
 * namespaceId, groupId, account, signer, timestampMs}`, `credential` = the joiner device's credential
 * (identity/credentials.ts; binds `signer` to `account`), `signature` = hex Ed25519 by `signer` over
 * `domain_hash("hearth.namespace.join.v1", [canonical JSON of statement])`.
 */
import { badRequest, conflict, forbidden } from '../../errors.ts';
import { domainHash, isHexBytes } from '../../crypto/ids.ts';
import { ed25519Verify } from '../../crypto/keys.ts';
import { parseCredential } from '../../identity/credentials.ts';
import type { ApplierRegistry } from '../appliers.ts';
import { groupOf } from '../authority.ts';
import { requireInviter } from '../invitations/inviter.ts';
import { clearRemoval, requireAdmissible } from '../invitations/admission.ts';
import { canonicalJson } from '../canonical.ts';
import type { NamespaceState } from '../types.ts';
import { recordAccountRoot } from '../proofs/roots.ts';
import { INVITED_ROLES, hexOf, invitationHash, parseInvitation, signatureValid, type SignedInvitation } from '../invitations/codec.ts';

export const JOIN_KINDS = ['MemberJoined', 'MemberJoinedAt'] as const;

export interface JoinStatement {
  kind: string;
  namespaceId: string;
  groupId: string;
  account: string;
  signer: string;
  timestampMs: number;
}

export interface SignedJoin {
  statement: JoinStatement;
  credential: string;
  signature: string;
}

export const joinDigest = (s: JoinStatement): Buffer => domainHash('hearth.namespace.join.v1', [Buffer.from(canonicalJson(s), 'utf8')]);

/** The wire form: hex of the UTF-8 JSON. */
export const encodeSignedJoin = (j: SignedJoin): string => Buffer.from(JSON.stringify(j), 'utf8').toString('hex');

/** Decodes `signedOp` (400 when it is not hex or not a signed join statement). */
export function decodeSignedJoin(hex: string): SignedJoin {
  if (hex.trim() === '') throw badRequest('signedOp must not be blank');
  if (!isHexBytes(hex)) throw badRequest('signedOp: expected hex');
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(hex, 'hex').toString('utf8'));
  } catch {
    throw badRequest('signedOp does not decode as a signed namespace op');
  }
  const j = raw as Partial<SignedJoin> | null;
  const s = j?.statement as Partial<JoinStatement> | undefined;
  const hex64 = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
  if (!s || typeof s.kind !== 'string' || !hex64(s.namespaceId) || !hex64(s.groupId) || !hex64(s.account) || !hex64(s.signer) || !Number.isSafeInteger(s.timestampMs)) {
    throw badRequest('signedOp does not decode as a signed namespace op');
  }
  if (typeof j!.credential !== 'string' || typeof j!.signature !== 'string' || !/^[0-9a-f]{128}$/.test(j!.signature)) {
    throw badRequest('signedOp does not decode as a signed namespace op');
  }
  const statement: JoinStatement = { kind: s.kind, namespaceId: s.namespaceId!, groupId: s.groupId!, account: s.account!, signer: s.signer!, timestampMs: s.timestampMs! };
  return { statement, credential: j!.credential, signature: j!.signature };
}

/** The op itself: namespace, kind, signature, and the credential binding signer to account (all 400). */
export function verifySignedJoin(j: SignedJoin, namespaceId: string): void {
  if (j.statement.namespaceId !== namespaceId) throw badRequest('signedOp names another namespace than the path');
  if (!(JOIN_KINDS as readonly string[]).includes(j.statement.kind)) throw badRequest(`signedOp is a ${j.statement.kind}, not a member join`);
  if (!ed25519Verify(j.statement.signer, joinDigest(j.statement), Buffer.from(j.signature, 'hex'))) throw badRequest('signedOp signature does not verify');
  const cred = parseCredential(j.credential);
  if (cred.accountId !== j.statement.account || cred.signingKey !== j.statement.signer) {
    throw badRequest("signedOp's credential does not bind its signer to its account");
  }
}

/** The invitation, as an admitter must see it (403 `invitation rejected: …`). */
export function checkInvitation(ns: NamespaceState, inv: SignedInvitation, admitter: string, nowSecs: number): void {
  if (!inv.invitation.admitters.includes(admitter)) throw forbidden(`account ${admitter} is not an admitter of this invitation`);
  const reject = (why: string) => forbidden(`invitation rejected: ${why}`);
  if (!signatureValid(inv)) throw reject('invalid inviter signature');
  const groupId = hexOf(inv.invitation.group_id);
  if (!ns.groups[groupId]) throw reject(`group '${groupId}' is not in namespace '${ns.id}'`);
  if (nowSecs > inv.invitation.expiration_timestamp) throw reject('expired');
  requireInviter(ns, ns.groups[groupId]!, inv);
}

export function registerAdmitOps(registry: ApplierRegistry): void {
  registry.register('namespace.admitted', ({ ns, op, emit }) => {
    const inv = parseInvitation(op.body.invitation);
    const join = decodeSignedJoin(String(op.body.signedOp));
    verifySignedJoin(join, ns.id);
    checkInvitation(ns, inv, op.account, Math.floor(join.statement.timestampMs / 1000));
    const group = groupOf(ns, hexOf(inv.invitation.group_id));
    if (join.statement.groupId !== group.id) throw badRequest('signedOp joins another group than the invitation names');
    const joiner = join.statement.account;
    const key = invitationHash(inv.invitation).toString('hex');
    const consumed = (group.consumedInvitations ??= {});
    if (consumed[key]?.includes(joiner)) throw conflict(`invitation already consumed by account ${joiner}`);
    requireAdmissible(ns, group, inv, joiner, join.statement.signer);
    if (group.members[joiner]) throw conflict(`account ${joiner} is already a member of group '${group.id}'`);
    const role = INVITED_ROLES[inv.invitation.invited_role]!;
    group.members[joiner] = { role, autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: join.statement.timestampMs };
    consumed[key] = [...(consumed[key] ?? []), joiner];
    clearRemoval(group, joiner);
    const cred = parseCredential(join.credential);
    ns.deviceBindings ??= {};
    (ns.deviceBindings[joiner] ??= {})[cred.deviceId] = { signingKey: cred.signingKey, linkedAt: join.statement.timestampMs };
    recordAccountRoot(ns, cred.rootPublicKey);
    emit(group.id, 'MemberJoined', { memberAccount: joiner, role });
  });
}
