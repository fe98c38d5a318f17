/**
 * @module hearth/client
 *
 * Typed client SDK for a hearth (or merod) node over HTTP: the auth surface
 * (`/auth`, `/admin`) and the admin API (`/admin-api`). Runs unchanged in
 * Node ≥ 20 and in browsers: it uses only `fetch`, `AbortController`, `URL`,
 * `TextEncoder`/`TextDecoder` and `atob`/`btoa`.
 *
 * Session behaviour matches the official SDK (auth-wire §9): the stored access
 * token is sent as a bearer header; a 401 with `x-auth-error: token_expired`
 * triggers one shared refresh and a single retry; `token_reuse`/`token_revoked`
 * clear the tokens and throw {@link AuthRevokedError}.
 */

import { AdminApi } from './admin.ts';
import { AliasesApi } from './aliases.ts';
import { ApplicationsApi } from './applications.ts';
import { AuthApi } from './auth.ts';
import { BlobsApi } from './blobs.ts';
import { AccountsApi } from './accounts.ts';
import { GroupsApi } from './groups.ts';
import { InvitationsApi } from './invitations.ts';
import { NamespacesApi } from './namespaces.ts';
import { OwnerApi } from './owner.ts';
import { SettingsApi } from './settings.ts';
import { ContextsApi } from './contexts.ts';
import { RpcApi } from './rpc.ts';
import { TeeApi } from './tee.ts';
import { UpgradesApi } from './upgrades.ts';
import { DelegationApi } from './delegation.ts';
import { HttpClient, type HttpClientOptions } from './http.ts';
import type { TokenStore } from './token-store.ts';

export type ClientOptions = HttpClientOptions;

export interface Client {
  /** `/auth/*` and `/admin/*`: tokens, root keys, client keys. */
  auth: AuthApi;
  /** `/admin-api/*`. */
  admin: AdminApi;
  /** `/admin-api/blobs`: upload, download, head, list, delete. */
  blobs: BlobsApi;
  /** `/admin-api/alias/*`: context, application and device aliases. */
  aliases: AliasesApi;
  /** `/admin-api/install-*`, `/applications/*`, `/packages/*`: installs, listings, ABI. */
  applications: ApplicationsApi;
  /** `/admin-api/namespaces/*`: create, list, manage namespaces; subgroups, admit, device revoke/link. */
  namespaces: NamespacesApi;
  /** `/admin-api/groups/*`: create, GroupInfo, members, tree, seal, ownership proofs. */
  groups: GroupsApi;
  /** Root-guarded owner operations: transfer ownership, owner delete, namespace admin. */
  owner: OwnerApi;
  /** Group and namespace invitations and joins. */
  invitations: InvitationsApi;
  /** Capabilities, group settings, metadata, TEE policies. */
  settings: SettingsApi;
  /** `/admin-api/identity` and `/admin-api/account/*`: this node's account and its devices. */
  accounts: AccountsApi;
  /** `/admin-api/contexts/*` and `/admin-api/identity/context`: contexts, identities, query, sync. */
  contexts: ContextsApi;
  /** `/jsonrpc`: application method calls (`execute`) and other JSON-RPC methods. */
  rpc: RpcApi;
  /** `/admin-api/tee/*`: TEE information and attestation quotes. */
  tee: TeeApi;
  /** Group upgrades and migration: upgrade, status, retry, migration and cascade status, abort. */
  upgrades: UpgradesApi;
  /** Delegated execution: intents, context intents and governance intents under members' warrants. */
  delegation: DelegationApi;
  /** The shared HTTP core, for routes without a typed method. */
  http: HttpClient;
  /** The token store in use (the one passed in, or a memory store). */
  tokenStore: TokenStore;
}

/**
 * Creates a client for one node.
 *
 * @param options `baseUrl` (required); `tokenStore` (default: in memory);
 *   `timeoutMs` per call (default 10 000); `fetch` (default: global);
 *   `onAuthRevoked`, called once when a terminal auth error cleared the tokens.
 *
 * @example
 * ```ts
 * import { createClient, HttpError } from 'hearth/client';
 *
 * const node = createClient({ baseUrl: 'http://localhost:2428' });
 * await node.auth.login({ username: 'dev', password: 'dev-password' });
 * const { status } = await node.admin.health();
 * const keys = await node.auth.listRootKeys();
 * try {
 *   await node.auth.deleteRootKey('unknown');
 * } catch (err) {
 *   if (err instanceof HttpError) console.log(err.status, err.errorText); // 404 Root key not found
 * }
 * await node.auth.logout();
 * ```
 */
export function createClient(options: ClientOptions): Client {
  const http = new HttpClient(options);
  return {
    auth: new AuthApi(http),
    admin: new AdminApi(http),
    blobs: new BlobsApi(http),
    aliases: new AliasesApi(http),
    applications: new ApplicationsApi(http),
    namespaces: new NamespacesApi(http),
    groups: new GroupsApi(http),
    owner: new OwnerApi(http),
    invitations: new InvitationsApi(http),
    settings: new SettingsApi(http),
    accounts: new AccountsApi(http),
    contexts: new ContextsApi(http),
    rpc: new RpcApi(http),
    tee: new TeeApi(http),
    upgrades: new UpgradesApi(http),
    delegation: new DelegationApi(http),
    http,
    tokenStore: http.tokenStore,
  };
}

export { AdminApi, statusOf, type NetworkStatus, type StatusResponse, type Usage } from './admin.ts';
export { AliasesApi, type AliasScope } from './aliases.ts';
export {
  ApplicationsApi,
  INSTALL_TIMEOUT_MS,
  type AbiOptions,
  type Application,
  type ApplicationVersionEntry,
  type LatestVersion,
} from './applications.ts';
export {
  ContextsApi,
  type Context,
  type ContextSyncStatus,
  type ContextIdentities,
  type ContextWithExecutors,
  type CreateContextRequest,
  type CreateContextResponse,
  type IntentRelayInfo,
  type PresenceIntentRequest,
  type RawStateEntry,
  type RawStatePage,
  type RawStateValue,
} from './contexts.ts';
export { RpcApi, type ExecuteOptions } from './rpc.ts';
export { TeeApi, type TeeAttestRequest, type TeeAttestResult, type TeeInfo } from './tee.ts';
export {
  DelegationApi,
  type ContextIntentRelayInfo,
  type GovernanceIntentRelayInfo,
  type PerformIntentRequest as PerformIntentBody,
  type PerformIntentResult,
} from './delegation.ts';
export {
  UpgradesApi,
  type CascadeStatusEntry,
  type GroupUpgradeStatus,
  type MigrationStatus,
  type UpgradeGroupRequest,
  type UpgradeGroupResult,
  type UpgradeState,
} from './upgrades.ts';
export {
  AccountsApi,
  type AccountApplication,
  type AccountDevice,
  type DeviceScope,
  type LabelResult,
  type LinkSkipReason,
  type NodeIdentity,
  type PairCompleteRequest,
  type PairCompleteResult,
  type PairInitResult,
  type RelinkResult,
  type RescopeResult,
  type RootSignDomain,
  type SignWithRootResult,
} from './accounts.ts';
export {
  GroupsApi,
  type CreateGroupRequest,
  type GroupContextEntry,
  type GroupEntry,
  type GroupInfo,
  type GroupMember,
  type GroupMemberDevices,
  type GroupRole,
  type JoinViaInheritanceResult,
  type NamespaceOwnershipProof,
  type OwnershipClaim,
  type OwnershipProof,
  type SealedEnvelope,
  type SyncGroupResult,
} from './groups.ts';
export { InvitationsApi, type CreateInvitationRequest, type InvitationResult, type RecursiveInvitationResult, type SignedGroupOpenInvitation } from './invitations.ts';
export { NamespacesApi, type CreateNamespaceResult, type Namespace, type RevokeDeviceResult, type SubgroupEntry } from './namespaces.ts';
export { OwnerApi, type ChangeNamespaceAdminRequest, type TransferOwnershipRequest } from './owner.ts';
export {
  CAPABILITIES,
  SettingsApi,
  type MetadataRecord,
  type SetMetadataRequest,
  type SetTeeAdmissionPolicyRequest,
  type SignedReleasePolicy,
  type SubgroupVisibility,
  type TeeAdmissionPolicy,
  type TeeMode,
} from './settings.ts';
export {
  BlobsApi,
  PEER_LOOKUP_TIMEOUT_MS,
  type BlobEntry,
  type BlobInfo,
  type DeletedBlob,
  type DownloadOptions,
  type LookupOptions,
  type ProgressFn,
  type UploadOptions,
} from './blobs.ts';
export { AuthApi, DEFAULT_CLIENT_NAME, type LogoutOptions, type MockTokenOptions } from './auth.ts';
export type * from './auth-types.ts';
export {
  AuthRevokedError,
  DecodeError,
  errorText,
  HttpError,
  NetworkError,
  RpcError,
  TERMINAL_AUTH_ERRORS,
  TimeoutError,
  type AuthErrorCode,
  type HttpErrorInit,
} from './errors.ts';
export {
  DEFAULT_TIMEOUT_MS,
  PEER_WAIT_TIMEOUT_MS,
  HttpClient,
  type CallOptions,
  type HttpClientOptions,
  type HttpResponse,
  type Query,
  type RequestOptions,
} from './http.ts';
export { parseJson, stringifyJson, type JsonParseOptions, type U64 } from '../codec/json.ts';
export {
  decodeBytes,
  decodeJsonBytes,
  EventStream,
  SseParser,
  type ContextFrame,
  type EphemeralData,
  type EventStreamOptions,
  type GapInfo,
  type GroupFrame,
  type MembershipData,
  type SseSessionInfo,
  type StateMutationData,
  type StreamEvents,
  type StreamFrame,
  type FrameData,
  type FrameType,
  type SubscriptionIds,
  type SyncStatusData,
} from './events.ts';
export { EventSocket, SocketRequestError, type EventSocketOptions, type SocketEvents, type WebSocketConstructor, type WebSocketLike } from './ws.ts';
export { bytesAsText, bytesToHex, displayBytes, isByteArray } from './bytes.ts';
export { clientIdOf, decodeJwtClaims, tokenExpiresAt, tokensFromPair, type JwtClaims } from './jwt.ts';
export { MemoryTokenStore, type Tokens, type TokenStore } from './token-store.ts';
export { INVITATION_TEXT_PREFIX, invitationFromText, invitationToText } from './invitation-text.ts';
