/**
 * @module client/namespaces
 *
 * Namespace routes (admin spec "Namespaces"; admin-wire-b §2.2–§2.6, §2.9, §2.10, §2.11, §2.12, §2.14, §2.15).
 * Every body here is a `{data}` envelope except `leave`, which answers an empty 200 (resolves to
 * `void`). `createdAt` is u64 unix seconds: a `bigint` when it exceeds 2^53−1.
 */

import type { U64 } from '../codec/json.ts';
import type { CallOptions, HttpClient } from './http.ts';

export interface Namespace {
  namespaceId: string;
  appKey: string;
  targetApplicationId: string;
  createdAt: U64;
  name?: string;
  memberCount: number;
  contextCount: number;
  subgroupCount: number;
  appVersion?: string;
  founding?: { founderAccountId: string; salt: string };
  heldOps?: { ops: { deltaId: string; groupId: string }[]; untracked: U64 };
}

export interface CreateNamespaceResult {
  namespaceId: string;
  founding: { founderAccountId: string; salt: string };
}

export interface SubgroupEntry {
  groupId: string;
  name?: string;
}

export interface RevokeDeviceResult {
  accountId: string;
  deviceId: string;
  /** refers to the namespace in the path */
  keyRotated: boolean;
  revokedIn: { namespaceId: string; keyRotated: boolean }[];
}

const ns = (id: string) => `/admin-api/namespaces/${encodeURIComponent(id)}`;

export class NamespacesApi {
  constructor(private readonly http: HttpClient) {}

  /** `POST /namespaces` → `{namespaceId, founding}`. */
  create(body: { applicationId: string; name?: string; appKey?: string }, options?: CallOptions): Promise<CreateNamespaceResult> {
    return this.http.data('/admin-api/namespaces', { ...options, method: 'POST', body });
  }

  /** `GET /namespaces` (the hidden account namespace is never listed). */
  list(options?: CallOptions): Promise<Namespace[]> {
    return this.http.data('/admin-api/namespaces', options);
  }

  get(namespaceId: string, options?: CallOptions): Promise<Namespace> {
    return this.http.data(ns(namespaceId), options);
  }

  /** `DELETE /namespaces/{ns}` → `{isDeleted: true}` (sends no body: the body is optional). */
  delete(namespaceId: string, options?: CallOptions): Promise<{ isDeleted: boolean }> {
    return this.http.data(ns(namespaceId), { ...options, method: 'DELETE' });
  }

  forApplication(applicationId: string, options?: CallOptions): Promise<Namespace[]> {
    return this.http.data(`/admin-api/namespaces/for-application/${encodeURIComponent(applicationId)}`, options);
  }

  /** `POST /namespaces/{ns}/leave`: cascading self-leave; empty 200. */
  async leave(namespaceId: string, options?: CallOptions): Promise<void> {
    await this.http.json(`${ns(namespaceId)}/leave`, { ...options, method: 'POST' });
  }

  /** `POST /namespaces/{ns}/groups`: a subgroup below the root; `visibility` absent = open. */
  createGroup(
    namespaceId: string,
    body: { groupName?: string; visibility?: 'open' | 'restricted' } = {},
    options?: CallOptions,
  ): Promise<{ groupId: string }> {
    return this.http.data(`${ns(namespaceId)}/groups`, { ...options, method: 'POST', body });
  }

  /** `GET /namespaces/{ns}/groups` → every group below the root. */
  groups(namespaceId: string, options?: CallOptions): Promise<SubgroupEntry[]> {
    return this.http.data(`${ns(namespaceId)}/groups`, options);
  }

  /** `POST /namespaces/{ns}/account/revoke`: withdraws a device of this node's account everywhere. */
  revokeDevice(namespaceId: string, body: { deviceId: string; proof?: string }, options?: CallOptions): Promise<RevokeDeviceResult> {
    return this.http.data(`${ns(namespaceId)}/account/revoke`, { ...options, method: 'POST', body });
  }

  /** `POST /namespaces/{ns}/account/link-device`: carries a device link (credential + scope proof, hex). */
  linkDevice(namespaceId: string, body: { credential: string; scope: string }, options?: CallOptions): Promise<{ accountId: string; deviceId: string; alreadyBound: boolean }> {
    return this.http.data(`${ns(namespaceId)}/account/link-device`, { ...options, method: 'POST', body });
  }

  /** `POST /namespaces/{ns}/admit`: publishes a keyholder's self-signed join (this node must be an admitter). */
  admit(namespaceId: string, body: { invitation: unknown; signedOp: string }, options?: CallOptions): Promise<{ published: boolean }> {
    return this.http.data(`${ns(namespaceId)}/admit`, { ...options, method: 'POST', body });
  }
}
