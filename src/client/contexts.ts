/**
 * @module client/contexts
 *
 * The context routes of `/admin-api` (admin spec "Contexts"; admin-wire-a §4): create, list, get,
 * delete, per-application listings, group, storage, identities, join/leave, application update,
 * sync/resync, query, fresh identities and the delegated-execution relay information; and hearth's
 * own sync-status routes (`syncStatus`, `syncStatuses`), kept apart from the spec-shaped Context,
 * and its raw state rows (`rawState`, `rawStateValue`; admin only, docs/contexts.md).
 *
 * Bodies are decoded as the wire sends them: most are `{data}` envelopes; `with-executors` and
 * `resync` are flat; leave, application update and sync answer no payload (these resolve to
 * `void`). Non-2xx answers throw {@link HttpError}: 400 bad input or a failed `init`, 403 outside
 * the owning group, 404 unknown context, 409 a query of a method not marked read-only. A failing
 * query method is a 400 whose body carries `type: "FunctionCallError"` (read it from
 * `HttpError.body`).
 */

import type { CallOptions, HttpClient } from './http.ts';
import type { U64 } from '../codec/json.ts';
import type { Context, RawStateEntry, RawStatePage, RawStateValue } from '../wire/contexts.ts';
import type { SyncStatusFields } from '../wire/sync.ts';

export type { Context, RawStateEntry, RawStatePage, RawStateValue };

/**
 * hearth's honest sync status of a context on one node (docs/sync.md), from hearth's own routes
 * `GET /contexts/{id}/sync` and `GET /contexts/sync`: never part of the spec's Context.
 */
export interface ContextSyncStatus extends SyncStatusFields {
  contextId: string;
}

export interface CreateContextRequest {
  groupId: string;
  /** overridden by the group's target application */
  applicationId?: string;
  /** the bytes handed to the application's `init` (UTF-8 JSON of its arguments; empty for none) */
  initializationParams?: Uint8Array | number[];
  /** 32 bytes (hex) the context key derives from; random when absent */
  contextSeed?: string;
  /** the creator's member key as a 32-byte Ed25519 private key (hex); default: the node's key */
  identitySecret?: string;
  serviceName?: string;
  name?: string;
}

export interface CreateContextResponse {
  contextId: string;
  memberPublicKey: string;
  groupId: string;
  groupCreated: boolean;
}

export interface ContextWithExecutors {
  id: string;
  application_id: string;
  contextStateHash: string;
  executors: string[];
}

export interface ContextIdentities {
  identities: string[];
  /** `members`, `node` or `caller`; absent on nodes that predate it (spec rule 3) */
  identitiesOf?: 'members' | 'node' | 'caller';
}

export interface IntentRelayInfo {
  executorAccount: string;
  executorKey: string;
  releaseBytecodeId?: string;
  releaseVersion?: string;
  /** false is the default state of every context, not an error */
  canAuthorOnBehalf: boolean;
  /** the group owning the context */
  groupId?: string;
  /** the group (this one or an ancestor) whose grant `canAuthorOnBehalf` rests on; absent without one */
  grantedOnGroupId?: string;
}

/**
 * `POST /contexts/{id}/presence-intents` body: one presence update an account's device signed (the
 * reference's `PresenceIntentRequest`; every field is sent, `state` as `null` to retract).
 */
export interface PresenceIntentRequest {
  /** hex of the presence slice (at most 16 384 bytes), or null to retract */
  state: string | null;
  /** above the last this node accepted from the device for this context */
  seq: U64;
  /** the device's clock, within 7 s of the node's */
  sentAtMs: U64;
  /** hex, 64 bytes: the device key's Ed25519 signature over the `calimero/presence/1` statement */
  signature: string;
  /** hex of the borsh `AccountProof<DeviceCert>` tying the device key to its account */
  authorProof: string;
}

export class ContextsApi {
  constructor(private readonly http: HttpClient) {}

  /** `POST /contexts`: registers a context in a group and runs its application's `init`. */
  create(request: CreateContextRequest, options?: CallOptions): Promise<CreateContextResponse> {
    const { initializationParams, ...rest } = request;
    return this.http.data('/admin-api/contexts', {
      ...options,
      method: 'POST',
      body: { ...rest, initializationParams: [...(initializationParams ?? [])] },
    });
  }

  /** `GET /contexts`: every context this node holds. */
  async list(options?: CallOptions): Promise<Context[]> {
    return (await this.http.data<{ contexts: Context[] }>('/admin-api/contexts', options)).contexts;
  }

  get(contextId: string, options?: CallOptions): Promise<Context> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}`, options);
  }

  /** `DELETE /contexts/{id}` → whether a context was deleted (false for an unknown one). */
  async delete(contextId: string, options?: CallOptions): Promise<boolean> {
    return (await this.http.data<{ isDeleted: boolean }>(`/admin-api/contexts/${seg(contextId)}`, { ...options, method: 'DELETE' })).isDeleted;
  }

  async forApplication(applicationId: string, options?: CallOptions): Promise<Context[]> {
    return (await this.http.data<{ contexts: Context[] }>(`/admin-api/contexts/for-application/${seg(applicationId)}`, options)).contexts;
  }

  /** Flat on the wire, with the reference's snake_case `application_id`. */
  async withExecutors(applicationId: string, options?: CallOptions): Promise<ContextWithExecutors[]> {
    return (await this.http.json<{ contexts: ContextWithExecutors[] }>(`/admin-api/contexts/with-executors/for-application/${seg(applicationId)}`, options)).contexts;
  }

  /** The owning group's id, or null. */
  group(contextId: string, options?: CallOptions): Promise<string | null> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/group`, { ...options, nullable: true });
  }

  async storage(contextId: string, options?: CallOptions): Promise<U64> {
    return (await this.http.data<{ sizeInBytes: U64 }>(`/admin-api/contexts/${seg(contextId)}/storage`, options)).sizeInBytes;
  }

  identities(contextId: string, options?: CallOptions): Promise<ContextIdentities> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/identities`, options);
  }

  identitiesOwned(contextId: string, options?: CallOptions): Promise<ContextIdentities> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/identities-owned`, options);
  }

  /** Joining again is a success; a context not pulled yet reads uninitialized until synced. */
  join(contextId: string, options?: CallOptions): Promise<{ contextId: string; memberPublicKey: string }> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/join`, { ...options, method: 'POST', body: {} });
  }

  async leave(contextId: string, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/contexts/${seg(contextId)}/leave`, { ...options, method: 'POST', body: {} });
  }

  async updateApplication(contextId: string, applicationId: string, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/contexts/${seg(contextId)}/application`, { ...options, method: 'POST', body: { applicationId } });
  }

  /** `POST /contexts/sync[/{id}]`: accepted at once; progress arrives as `SyncStatus` events. */
  async sync(contextId?: string, options?: CallOptions): Promise<void> {
    const path = contextId === undefined ? '/admin-api/contexts/sync' : `/admin-api/contexts/sync/${seg(contextId)}`;
    await this.http.send(path, { ...options, method: 'POST' });
  }

  /**
   * hearth: `GET /contexts/{id}/sync`, the context's sync status on this node. 404 unknown context;
   * 503 on a node without a network (nothing to sync with).
   */
  syncStatus(contextId: string, options?: CallOptions): Promise<ContextSyncStatus> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/sync`, options);
  }

  /** hearth: `GET /contexts/sync`, the sync status of every context this node holds (503 without a network). */
  async syncStatuses(options?: CallOptions): Promise<ContextSyncStatus[]> {
    return (await this.http.data<{ contexts: ContextSyncStatus[] }>('/admin-api/contexts/sync', options)).contexts;
  }

  /**
   * hearth: `GET /contexts/{id}/raw-state`, a page of the context's replicated state rows in key
   * order (admin only). `after` is the previous page's `next`; `limit` 1 to 500 (the node's default
   * 100). 404 unknown context; 400 a malformed `after` or `limit`.
   */
  rawState(contextId: string, page: { after?: string; limit?: number } = {}, options?: CallOptions): Promise<RawStatePage> {
    const q = new URLSearchParams();
    if (page.after !== undefined) q.set('after', page.after);
    if (page.limit !== undefined) q.set('limit', String(page.limit));
    const query = q.toString() === '' ? '' : `?${q}`;
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/raw-state${query}`, options);
  }

  /** hearth: `GET /contexts/{id}/raw-state/value`, one row's value by hex key (404 when there is none). */
  rawStateValue(contextId: string, key: string, options?: CallOptions): Promise<RawStateValue> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/raw-state/value?key=${encodeURIComponent(key)}`, options);
  }

  /** Flat on the wire: `{contextId, resyncStarted}`. */
  resync(contextId: string, force = false, options?: CallOptions): Promise<{ contextId: string; resyncStarted: boolean }> {
    return this.http.json(`/admin-api/contexts/${seg(contextId)}/resync`, { ...options, method: 'POST', body: { force } });
  }

  /**
   * `POST /contexts/invite-specialized-node`: asks specialized (read-only replica) nodes to join the
   * context; answers the discovery nonce (docs/sync.md "Specialized nodes").
   */
  inviteSpecializedNode(contextId: string, inviterId?: string, options?: CallOptions): Promise<{ nonce: string }> {
    return this.http.data('/admin-api/contexts/invite-specialized-node', { ...options, method: 'POST', body: { contextId, ...(inviterId ? { inviterId } : {}) } });
  }

  /** `POST /contexts/{id}/query`: a read-only method's return value. */
  async query<T = unknown>(contextId: string, method: string, argsJson: unknown = {}, options?: CallOptions): Promise<T> {
    const data = await this.http.data<{ output: T }>(`/admin-api/contexts/${seg(contextId)}/query`, {
      ...options,
      method: 'POST',
      body: { method, argsJson },
    });
    return data.output;
  }

  /** `GET /contexts/{id}/intents`: what a warrant for this node must name. */
  intents(contextId: string, options?: CallOptions): Promise<IntentRelayInfo> {
    return this.http.data(`/admin-api/contexts/${seg(contextId)}/intents`, options);
  }

  /**
   * `POST /contexts/{id}/presence-intents`: relays an account's presence (answer 204). The live
   * `Ephemeral` frame names the account. 400 bad input, stale `sentAtMs` or `seq`, or a proof that
   * does not verify; 403 the account is not a member of the context's group (or the device is
   * revoked); 404 unknown context; 413 slice too large.
   */
  async postPresenceIntent(contextId: string, request: PresenceIntentRequest, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/contexts/${seg(contextId)}/presence-intents`, { ...options, method: 'POST', body: request });
  }

  /** `POST /identity/context`: a fresh identity the node holds the key of. */
  async newIdentity(options?: CallOptions): Promise<string> {
    return (await this.http.data<{ publicKey: string }>('/admin-api/identity/context', { ...options, method: 'POST' })).publicKey;
  }
}

/** One path segment, percent-encoded so an id can never change the route. */
const seg = (s: string): string => encodeURIComponent(s);
