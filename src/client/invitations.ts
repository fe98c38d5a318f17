/**
 * @module client/invitations
 *
 * Invitations and joins (admin-wire-b §2.7–§2.8, §4.16–§4.17). The invitation object is the
 * reference's snake_case `SignedGroupOpenInvitation`; pass it through verbatim (its `invitation`
 * body is signed, so dropping or adding a key breaks the signature).
 */
import type { CallOptions, HttpClient } from './http.ts';
import { PEER_WAIT_TIMEOUT_MS } from './http-types.ts';
import type { SignedGroupOpenInvitation } from '../wire/invitations.ts';

export type { SignedGroupOpenInvitation };

export interface CreateInvitationRequest {
  /** a duration in seconds (default and maximum 86 400) */
  expirationTimestamp?: number;
  recursive?: boolean;
  admitters?: string[];
  admitterAddrs?: string[];
}

export interface InvitationResult {
  invitation: SignedGroupOpenInvitation;
  groupName?: string;
}

export interface RecursiveInvitationResult {
  invitations: (InvitationResult & { groupId: string })[];
}

/** hearth: what `revoke` answers. */
export interface RevokeInvitationResult {
  groupId: string;
  /** hex SHA-256 of the signed invitation body */
  invitationId: string;
  revoked: true;
}

export class InvitationsApi {
  constructor(private readonly http: HttpClient) {}

  /** `POST /groups/{g}/invite` → `{invitation, groupName?}` */
  inviteToGroup(groupId: string, body: Omit<CreateInvitationRequest, 'recursive'> = {}, options?: CallOptions): Promise<InvitationResult> {
    return this.http.data(`/admin-api/groups/${groupId}/invite`, { ...options, method: 'POST', body });
  }

  /** `POST /namespaces/{ns}/invite` → one invitation, or with `recursive: true` one per group. */
  inviteToNamespace(namespaceId: string, body?: CreateInvitationRequest & { recursive?: false }, options?: CallOptions): Promise<InvitationResult>;
  inviteToNamespace(namespaceId: string, body: CreateInvitationRequest & { recursive: true }, options?: CallOptions): Promise<RecursiveInvitationResult>;
  inviteToNamespace(namespaceId: string, body: CreateInvitationRequest = {}, options?: CallOptions): Promise<InvitationResult | RecursiveInvitationResult> {
    return this.http.data(`/admin-api/namespaces/${namespaceId}/invite`, { ...options, method: 'POST', body });
  }

  /**
   * hearth: `POST /groups/{g}/invitations/revoke` — withdraws an invitation (given whole, or by its
   * id); every member node refuses it from then on. Needs invite authority in the group (403).
   */
  revoke(groupId: string, which: { invitation: SignedGroupOpenInvitation } | { invitationId: string }, options?: CallOptions): Promise<RevokeInvitationResult> {
    return this.http.data(`/admin-api/groups/${groupId}/invitations/revoke`, { ...options, method: 'POST', body: which });
  }

  /** `POST /groups/join` */
  joinGroup(invitation: SignedGroupOpenInvitation, groupName?: string, options?: CallOptions): Promise<{ groupId: string; memberIdentity: string; memberAccount: string }> {
    return this.http.data('/admin-api/groups/join', { timeoutMs: PEER_WAIT_TIMEOUT_MS, ...options, method: 'POST', body: { invitation, ...(groupName !== undefined ? { groupName } : {}) } });
  }

  /**
   * `POST /namespaces/{ns}/join`. `groupId` carries the same id as `namespaceId` for clients that
   * predate the rc.25 rename (a compatibility alias, docs/decisions.md); read `namespaceId`.
   */
  joinNamespace(namespaceId: string, invitation: SignedGroupOpenInvitation, options?: CallOptions): Promise<{ namespaceId: string; groupId?: string; memberIdentity: string; memberAccount: string }> {
    return this.http.data(`/admin-api/namespaces/${namespaceId}/join`, { timeoutMs: PEER_WAIT_TIMEOUT_MS, ...options, method: 'POST', body: { invitation } });
  }
}
