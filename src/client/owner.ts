/**
 * @module client/owner
 *
 * Root-guarded owner operations (admin-wire-b §5, §2.13, §4.21). Each answers an empty 200 (spec:
 * none). `rootProof` is the hex of borsh `SignedOwnerOp`; omit it to let a node that holds the
 * owner's account root sign itself. Read `namespaceId` and `ownerOpCounter` from `GET /groups/{g}`
 * right before signing a proof: a stale counter is a 409.
 */
import type { CallOptions, HttpClient } from './http.ts';

export interface TransferOwnershipRequest {
  newOwner: string;
  rootProof?: string;
}

export interface ChangeNamespaceAdminRequest {
  newAdmin: string;
  rootProof?: string;
}

export class OwnerApi {
  constructor(private readonly http: HttpClient) {}

  /** `POST /groups/{g}/transfer-ownership`; the new owner must already be an admin (409 otherwise). */
  async transferOwnership(groupId: string, body: TransferOwnershipRequest, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/groups/${groupId}/transfer-ownership`, { ...options, method: 'POST', body });
  }

  /** `POST /groups/{g}/owner-delete`; only a group with no contexts (409 otherwise). */
  async ownerDelete(groupId: string, body: { rootProof?: string } = {}, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/groups/${groupId}/owner-delete`, { ...options, method: 'POST', body });
  }

  /** `POST /namespaces/{ns}/admin`; owner only; the new admin must be a member of the root. */
  async changeNamespaceAdmin(namespaceId: string, body: ChangeNamespaceAdminRequest, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/namespaces/${namespaceId}/admin`, { ...options, method: 'POST', body });
  }
}
