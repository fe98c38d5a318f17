/**
 * @module client/auth-types
 *
 * Wire types of the auth surface (`/auth/*`, `/admin/*`): the auth spec's
 * resources plus the shapes auth-wire §2 records where the spec is silent.
 * Field names are the wire's snake_case. Timestamps (`created_at`, `revoked_at`)
 * are integer Unix seconds (auth-wire §7, §12.2).
 */

import type { CallOptions } from './http-types.ts';
import type { U64 } from '../codec/json.ts';

/** The `{data, error}` envelope every auth handler answers with (auth-wire §1.2). */
export interface AuthEnvelope<T> {
  data: T;
  error?: string | null;
}

/** The token pair inside a TokenResponse. */
export interface TokenPair {
  access_token: string;
  refresh_token: string;
  error?: string | null;
}

/** `POST /auth/token`, `/auth/refresh`, `/auth/mock-token`, `/admin/client-key` answer. */
export type TokenResponse = AuthEnvelope<TokenPair>;

export interface HealthResponse {
  /** `"alive"`, or `"not_alive"` when the storage probe fails. */
  status: string;
  storage: boolean;
  uptime_seconds: U64;
}

export interface IdentityResponse {
  service: string;
  version: string;
  authentication_mode: string;
  providers: string[];
}

export interface Provider {
  name: string;
  type: string;
  description: string;
  configured: boolean;
  config: Record<string, unknown>;
}

export interface ProvidersResponse {
  providers: Provider[];
  count: number;
}

export interface RootKey {
  key_id: string;
  public_key: string;
  auth_method: string;
  created_at: number;
  revoked_at: number | null;
  permissions: string[];
}

export interface ClientKey {
  client_id: string;
  root_key_id: string;
  name: string;
  permissions: string[];
  created_at: number;
  revoked_at: number | null;
  /** hearth, `listClientKeysWithDetails` only: Unix seconds after which the key is invalid (client keys always expire) */
  expires_at?: number | null;
  /** hearth, `listClientKeysWithDetails` only: the application the key is bound to, if any */
  application_id?: string | null;
  is_valid: boolean;
}

export interface TokenRequest {
  auth_method: string;
  public_key: string;
  client_name: string;
  permissions?: string[];
  /** Unix seconds. */
  timestamp: number;
  provider_data: Record<string, unknown>;
}

export interface LoginParams {
  username: string;
  password: string;
  /**
   * Sent as `client_name`; the node stores it as the token's `node_url` claim.
   * A URL with a host binds the token to that host (auth-wire §4.5); the default
   * `"hearth-client"` binds nothing.
   */
  clientName?: string;
}

export interface MockTokenRequest {
  client_name: string;
  permissions?: string[];
  node_url?: string;
}

export interface LogoutResponse {
  success: boolean;
}

export interface RevokeTokenResponse {
  success: boolean;
  message: string;
}

export interface CreateKeyRequest {
  public_key: string;
  auth_method: string;
  provider_data: Record<string, unknown>;
  target_node_url?: string;
}

export interface CreateKeyResponse {
  status: boolean;
  message: string;
}

/** `DELETE /admin/keys/{id}`: the revoked key; a reference node answers its refusal of the last active root key as `status: false` (hearth: 409). */
export type DeleteKeyResponse =
  | { key_id: string; revoked_at: number }
  | { status: false; message: string };

export interface PermissionResponse {
  permissions: string[];
}

export interface UpdateKeyPermissionsRequest {
  add?: string[];
  remove?: string[];
}

export interface GenerateClientKeyRequest {
  context_id?: string;
  context_identity?: string;
  permissions?: string[];
  /** Binds the key to one application (rc.83). */
  application_id?: string;
  /** Key lifetime in seconds (rc.83; the node's default is 30 days). */
  ttl_secs?: number | bigint;
  target_node_url?: string;
}

export interface DeleteClientResponse {
  message: string;
  revoked_at: number;
}

/** Options of `validate()`: the method to ask with (all three answer alike; HEAD has no body). */
export interface ValidateOptions extends CallOptions {
  /** Default `HEAD`, as the official clients and forward-auth proxies use it. */
  method?: 'HEAD' | 'GET' | 'POST';
}

/** `/auth/validate` outcome, read from status and headers. */
export interface ValidateResult {
  /** True for a 2xx answer. */
  valid: boolean;
  status: number;
  /** `X-Auth-User`: the key id the token belongs to. */
  user: string | null;
  /** `X-Auth-Permissions` split on `,` (empty when the header is absent). */
  permissions: string[];
  /** `X-Auth-Error`, e.g. `token_expired`, `invalid_token`, `missing_token`. */
  authError: string | null;
}

/** What `logout()` did; steps (a) and (b) are best effort (auth spec, Endpoints rule 5). */
export interface LogoutResult {
  /** Step (a): `POST /auth/logout` answered 2xx. False when it failed or no token was stored. */
  loggedOut: boolean;
  /** Step (b): `POST /admin/revoke` answered 2xx; `null` when no client id was known. */
  revoked: boolean | null;
  /** The client id used for step (b), if any. */
  clientId: string | null;
  /** Errors from steps (a) and (b), in order; they never stop step (c). */
  errors: unknown[];
}
