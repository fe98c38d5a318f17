/**
 * Invitations and joins (admin-wire-b §2.7–§2.8, §4.16–§4.17). An invitation is a bearer
 * credential minted and signed by this node's key; nothing is published when it is created. A join
 * verifies the invitation, then either appends the join op (the group is on this node), answers as
 * a no-op (this account is already a direct member), or — for a group this node does not have yet —
 * first fetches the namespace's log from the inviter or an admitter (replication, `remote`), and
 * when no peer answers records a pending join persistently, which `resolvePending` completes once
 * a peer is reachable (replication calls it on every connection and heartbeat); when a member peer
 * refuses the invitation itself (revoked, used, a removal since it was issued), the join fails with
 * that reason. Joins of one group run one after another, and `completePending` lets a read that
 * follows a pending join (the group sync) wait for the attempt in flight rather than race it
 * (docs/governance.md "Acknowledged joins"). Invitations carry the namespace's removal count in
 * their signed salt, and can be revoked (admission.ts, issue 23 §3). Knows nothing of HTTP.
 */
import type { NodeIdentity } from '../../identity/identity.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, forbidden, HearthError } from '../../errors.ts';
import { collect, type Store } from '../../store/store.ts';
import { groupOf, requireCapability } from '../authority.ts';
import type { Governance } from '../log.ts';
import type { GroupState, NamespaceState } from '../types.ts';
import { SIGNER_BOUND, speaksFor } from '../signers.ts';
import { bytes32, hexOf, invitationHash, parseInvitation, signatureValid, type SignedInvitation } from './codec.ts';
import { INVITATION_OPS } from './ops.ts';
import { groupInScope } from '../namespaces/scope.ts';
import { invitationId, mintSalt } from './admission.ts';

/** MAX_INVITATION_VALIDITY_SECS (rc.29+): the default and the clamp. */
export const MAX_INVITATION_VALIDITY_SECS = 86_400;

export interface InviteInput {
  /** a duration in seconds (legacy name `expirationTimestamp`) */
  expirationSecs?: number;
  admitters?: string[];
  admitterAddrs?: string[];
  /** 0 Admin, 1 Member (the default), 2 ReadOnly: what the invited joins as */
  invitedRole?: 0 | 1 | 2;
}

export interface PendingJoin {
  groupId: string;
  invitation: SignedInvitation;
  recordedAt: number;
}

/** Fetches the log of the namespace holding an invitation's group from peers (replication). */
export interface RemoteJoin {
  /** `held`: this node now holds the group; `refusal`: a member peer refused the invitation itself (why) */
  fetchForInvitation(inv: SignedInvitation, signal?: AbortSignal): Promise<{ held: boolean; refusal?: string }>;
}

/** A member peer's refusal of an invitation, as the joining client sees it (403, or 409 for a spent one). */
export function invitationRefusal(why: string): HearthError {
  return /^invitation (already used|expired)/.test(why) ? conflict(why) : forbidden(why.startsWith('invitation') ? why : `invitation rejected: ${why}`);
}

/** How long a join waits for a peer to hand over the namespace before answering as pending. */
export const JOIN_FETCH_TIMEOUT_MS = 20_000;

export interface JoinResult {
  groupId: string;
  memberIdentity: string;
  memberAccount: string;
  pending: boolean;
}

const TEE_ROLES = new Set(['ReadOnlyTee', 'RelayTee']);

export class InvitationService {
  private readonly pending;
  /** the pass over pending joins in flight (resolvePending), shared by concurrent callers */
  private resolving: Promise<number> | undefined;
  /** per group, the last join queued: joins of one group run one after another */
  private readonly joins = new Map<string, Promise<JoinResult>>();
  /** per group, the retry of its pending join in flight (resolvePending, completePending) */
  private readonly retries = new Map<string, Promise<{ held: boolean; refusal?: HearthError }>>();

  constructor(
    private readonly d: {
      governance: Governance;
      identity: NodeIdentity;
      clock: Clock;
      store: Store;
      remote?: RemoteJoin;
      /** this node's dialable network addresses: the default `admitter_addrs` hints of its invitations */
      addresses?: () => string[];
    },
  ) {
    this.pending = d.store.space<PendingJoin>('gov.pending-joins');
  }

  /** One invitation to `groupId`; the node's account must be admin or hold CAN_INVITE_MEMBERS. */
  async invite(groupId: string, input: InviteInput): Promise<{ invitation: SignedInvitation; groupName?: string }> {
    const { ns, group } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    requireCapability(ns, group, this.d.identity.accountId, 'CAN_INVITE_MEMBERS');
    await this.bindOwnKey(ns);
    return this.mint(group, input);
  }

  /**
   * Joiners' nodes accept an invitation only from a key bound to `inviter_account` (inviter.ts): a
   * node that has not written to this namespace yet binds its key first, with an op of its own.
   */
  private async bindOwnKey(ns: NamespaceState): Promise<void> {
    if (!speaksFor(ns, this.d.identity.publicKey, this.d.identity.accountId)) await this.d.governance.submit(ns.id, ns.id, SIGNER_BOUND, {});
  }

  /** The namespace invite: the path must be a root; `recursive` adds every group the inviter may invite to. */
  async inviteNamespace(namespaceId: string, input: InviteInput, recursive: boolean) {
    const { ns, group } = groupInScope(this.d.governance, namespaceId, this.d.identity.accountId);
    if (group.parentId !== null) throw badRequest('namespace_id must reference a root group (namespace)');
    if (!recursive) return this.invite(namespaceId, input);
    requireCapability(ns, group, this.d.identity.accountId, 'CAN_INVITE_MEMBERS');
    await this.bindOwnKey(ns);
    const invitations = Object.values(ns.groups).flatMap((g) => {
      try {
        requireCapability(ns, g, this.d.identity.accountId, 'CAN_INVITE_MEMBERS');
      } catch {
        return []; // no grant in this subgroup: skipped (reference changelog)
      }
      return [{ groupId: g.id, ...this.mint(g, input) }];
    });
    return { invitations };
  }

  private mint(group: GroupState, input: InviteInput): { invitation: SignedInvitation; groupName?: string } {
    const secs = Math.min(input.expirationSecs ?? MAX_INVITATION_VALIDITY_SECS, MAX_INVITATION_VALIDITY_SECS);
    const admitters = input.admitters?.length
      ? input.admitters
      : Object.entries(group.members).filter(([, m]) => m.role === 'Admin' || TEE_ROLES.has(m.role)).map(([a]) => a);
    const body = {
      inviter_identity: bytes32(this.d.identity.publicKey),
      group_id: bytes32(group.id),
      expiration_timestamp: Math.floor(this.d.clock.now() / 1000) + secs,
      // the namespace's removal count rides in the signed salt: a removal after this moment bans (admission.ts)
      secret_salt: mintSalt(this.d.governance.namespace(group.namespaceId)?.removalEpoch ?? 0),
      invited_role: input.invitedRole ?? 1,
      admitters: [...new Set(admitters)].sort(),
    };
    const invitation: SignedInvitation = {
      invitation: body,
      inviter_signature: this.d.identity.sign(invitationHash(body)),
      inviter_account: this.d.identity.accountId,
      admitter_addrs: input.admitterAddrs ?? this.d.addresses?.() ?? [],
      application_id: bytes32(group.targetApplicationId),
      app_key: bytes32(group.appKey),
    };
    return { invitation, ...(group.name !== undefined ? { groupName: group.name } : {}) };
  }

  /**
   * Verifies and applies a join. `pathGroupId` (namespace join) must equal the invited group, and
   * a known group must then be a namespace root. Joins of one group run one after another (the
   * route, a retried pending join, a sync completing it): a second one sees what the first stored,
   * so it neither writes a second join op nor answers before the first is stored.
   */
  async join(raw: unknown, pathNamespaceId?: string): Promise<JoinResult> {
    const inv = parseInvitation(raw);
    const groupId = hexOf(inv.invitation.group_id);
    if (pathNamespaceId !== undefined && groupId !== pathNamespaceId) throw badRequest('invitation group_id does not match namespace_id in path');
    if (!signatureValid(inv)) throw badRequest('invalid invitation signature');
    const before = this.joins.get(groupId);
    const run = (before ?? Promise.resolve()).then(
      () => this.joinNow(inv, groupId, pathNamespaceId),
      () => this.joinNow(inv, groupId, pathNamespaceId),
    );
    this.joins.set(groupId, run);
    try {
      return await run;
    } finally {
      if (this.joins.get(groupId) === run) this.joins.delete(groupId);
    }
  }

  private async joinNow(inv: SignedInvitation, groupId: string, pathNamespaceId: string | undefined): Promise<JoinResult> {
    if (Math.floor(this.d.clock.now() / 1000) > inv.invitation.expiration_timestamp) throw conflict('invitation expired');
    const me = this.d.identity.accountId;
    const answer = (pending: boolean): JoinResult => ({ groupId, memberIdentity: this.d.identity.publicKey, memberAccount: me, pending });
    let found = this.d.governance.locate(groupId);
    if (!found && this.d.remote) {
      const fetched = await this.d.remote.fetchForInvitation(inv, AbortSignal.timeout(JOIN_FETCH_TIMEOUT_MS));
      found = this.d.governance.locate(groupId);
      // a member node refused this invitation (revoked, used, banned, inviter without authority): say so, record nothing
      if (!found && fetched.refusal) throw invitationRefusal(fetched.refusal);
    }
    if (!found) {
      await this.pending.put(groupId, { groupId, invitation: inv, recordedAt: this.d.clock.now() });
      return answer(true);
    }
    await this.pending.del(groupId);
    if (pathNamespaceId !== undefined && found.group.parentId !== null) throw badRequest('namespace_id must reference a root group (namespace)');
    const group = groupOf(found.ns, groupId);
    // already a direct member: nothing to apply. That covers a repeated join with the invitation this
    // account already joined with (a client retrying, a pending join completed meanwhile): the answer
    // repeats, no second op is written, and the invitation still admits nobody else
    if (group.members[me]) return answer(false);
    await this.d.governance.submit(found.ns.id, groupId, INVITATION_OPS.joined, { invitation: inv as unknown as Record<string, unknown> });
    return answer(false);
  }

  /**
   * Before a route reads a group this node has only a pending join for (`POST /groups/{g}/sync`):
   * waits for the retry of that join in flight (a heartbeat or connection retrying it), or retries
   * it now when none is, so the caller sees what that attempt stored rather than racing it. Resolves
   * with whether this node holds the group afterwards; a join a member peer refuses (in either
   * attempt) is dropped and its refusal thrown.
   */
  async completePending(groupId: string): Promise<boolean> {
    if (this.d.governance.locate(groupId)) return true;
    let outcome = this.retries.get(groupId);
    if (!outcome) {
      const p = await this.pending.get(groupId);
      if (p) outcome = this.retry(groupId, p);
    }
    const refused = (await outcome)?.refusal;
    if (refused && !this.d.governance.locate(groupId)) throw refused;
    return this.d.governance.locate(groupId) !== undefined;
  }

  /**
   * One more attempt at a pending join, shared with any caller while it runs; an invitation that
   * can no longer admit this node (expired, refused) is dropped, and why is in `refusal`.
   */
  private retry(groupId: string, p: PendingJoin): Promise<{ held: boolean; refusal?: HearthError }> {
    const running = this.retries.get(groupId);
    if (running) return running;
    const run = (async () => {
      try {
        return { held: !(await this.join(p.invitation)).pending };
      } catch (e) {
        if (!(e instanceof HearthError)) throw e;
        await this.pending.del(groupId);
        return { held: false, refusal: e };
      }
    })();
    this.retries.set(groupId, run);
    const done = () => void this.retries.delete(groupId);
    run.then(done, done);
    return run;
  }

  /**
   * Revokes an invitation to `groupId` (hearth-only route, docs/decisions.md): by the invitation
   * itself or its id (hex SHA-256 of the signed body). This node's account needs CAN_INVITE_MEMBERS
   * in the group (admins pass). Writes an `invitation.revoked` op, so every member node refuses the
   * invitation from then on; revoking it again answers the same without a second op.
   */
  async revoke(groupId: string, what: { invitation?: unknown; invitationId?: string }): Promise<{ groupId: string; invitationId: string; revoked: true }> {
    const { ns, group } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    let id = what.invitationId;
    if (what.invitation !== undefined) {
      const inv = parseInvitation(what.invitation);
      if (hexOf(inv.invitation.group_id) !== group.id) throw badRequest(`the invitation is to group '${hexOf(inv.invitation.group_id)}', not '${group.id}'`);
      const fromBody = invitationId(inv);
      if (id !== undefined && id !== fromBody) throw badRequest('invitationId does not match the invitation');
      id = fromBody;
    }
    if (id === undefined) throw badRequest('give the invitation or its invitationId');
    requireCapability(ns, group, this.d.identity.accountId, 'CAN_INVITE_MEMBERS');
    if (!group.revokedInvitations?.[id]) await this.d.governance.submit(ns.id, group.id, INVITATION_OPS.revoked, { invitationId: id });
    return { groupId: group.id, invitationId: id, revoked: true };
  }

  /** Joins recorded for groups this node does not have yet (completed by replication). */
  async pendingJoin(groupId: string): Promise<PendingJoin | undefined> {
    return this.pending.get(groupId);
  }

  /**
   * Retries every pending join; one whose invitation can no longer succeed (expired, refused) is
   * dropped. Resolves with how many completed. A call while one runs shares it (resolves with the
   * same count) instead of starting a second pass.
   */
  resolvePending(): Promise<number> {
    this.resolving ??= this.resolveAll().finally(() => (this.resolving = undefined));
    return this.resolving;
  }

  private async resolveAll(): Promise<number> {
    let done = 0;
    for (const [groupId, p] of await collect(this.pending.entries())) if ((await this.retry(groupId, p)).held) done++;
    return done;
  }
}
