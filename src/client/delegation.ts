/**
 * @module client/delegation
 *
 * Delegated execution (admin spec "Delegated execution", "Delegated creation and governance";
 * admin-wire-b §8): asking a relay node to act for a member under the member's signed warrant.
 * Warrants and author proofs are opaque hex strings the member's device mints; read the relay's
 * information first (`contexts.intents`, `contextIntentInfo`, `governanceIntentInfo`) for what a
 * warrant must name. On a node with `admin.delegated_access` these calls need no token.
 */

import type { CallOptions, HttpClient } from './http.ts';

export interface PerformIntentRequest {
  method: string;
  /** the arguments as the guest receives them; absent: `{}` */
  argsJson?: unknown;
  /** hex of the borsh Warrant */
  warrant: string;
  /** hex of the borsh AccountProof<DeviceCert> of the warrant's author device */
  authorProof: string;
}

export interface PerformIntentResult {
  /** the context's state hash after the run */
  rootHash: string;
  /** the method's return value (null for none) */
  returns: unknown;
}

export interface ContextIntentRelayInfo {
  executorAccount: string;
  executorKey: string;
  groupId: string;
  canCreateOnBehalf: boolean;
  /** only when asked about an author */
  authorMayCreate?: boolean;
}

export interface GovernanceIntentRelayInfo {
  executorAccount: string;
  executorKey: string;
  groupId: string;
  canActOnBehalf: boolean;
}

const seg = encodeURIComponent;

export class DelegationApi {
  constructor(private readonly http: HttpClient) {}

  /** `POST /contexts/{id}/intents`: one method run for the warrant's author. */
  performIntent(contextId: string, body: PerformIntentRequest, options?: CallOptions): Promise<PerformIntentResult> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/intents`, { ...options, method: 'POST', body });
  }

  /** `GET /groups/{g}/context-intents[?author=]`. */
  contextIntentInfo(groupId: string, author?: string, options?: CallOptions): Promise<ContextIntentRelayInfo> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/context-intents`, { ...options, query: author === undefined ? undefined : { author } });
  }

  /** `POST /groups/{g}/context-intents`: a context created for the warrant's author. */
  createContextIntent(groupId: string, body: { warrant: string; authorProof: string; initArgs?: unknown }, options?: CallOptions): Promise<{ contextId: string; groupId: string; memberPublicKey: string }> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/context-intents`, { ...options, method: 'POST', body });
  }

  /** `GET /groups/{g}/governance-intents`. */
  governanceIntentInfo(groupId: string, options?: CallOptions): Promise<GovernanceIntentRelayInfo> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/governance-intents`, options);
  }

  /** `POST /groups/{g}/governance-intents`: a governance op published for the warrant's author. */
  governanceIntent(groupId: string, body: { warrant: string; authorProof: string; op: string }, options?: CallOptions): Promise<{ groupId: string }> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/governance-intents`, { ...options, method: 'POST', body });
  }
}
