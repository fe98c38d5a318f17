/**
 * @module client/auth
 *
 * Typed calls for every route of the auth spec's Endpoints table: token issuance
 * and lifecycle under `/auth`, root- and client-key administration under
 * `/admin`. Payload shapes follow auth-wire §2; every answer is a `{data, error}`
 * envelope (auth-wire §1.2). Envelope handling per method:
 *
 * - token routes (`login`, `refresh`, `mockToken`) store the pair and return the
 *   stored {@link Tokens}; `createClientKey` returns the whole TokenResponse and
 *   stores nothing (the key is for someone else);
 * - every other JSON route returns its unwrapped `data` payload.
 */

import type {
  ClientKey,
  CreateKeyRequest,
  CreateKeyResponse,
  DeleteClientResponse,
  DeleteKeyResponse,
  GenerateClientKeyRequest,
  HealthResponse,
  IdentityResponse,
  LoginParams,
  LogoutResponse,
  LogoutResult,
  MockTokenRequest,
  PermissionResponse,
  ProvidersResponse,
  RevokeTokenResponse,
  RootKey,
  TokenRequest,
  TokenResponse,
  UpdateKeyPermissionsRequest,
  ValidateOptions,
  ValidateResult,
} from './auth-types.ts';
import type { CallOptions, HttpClient } from './http.ts';
import { clientIdOf, tokensFromPair } from './jwt.ts';
import type { Tokens } from './token-store.ts';

/** `client_name` sent by {@link AuthApi.login} when none is given. */
export const DEFAULT_CLIENT_NAME = 'hearth-client';

export interface MockTokenOptions extends CallOptions {
  /** Store the minted pair as the session (default true). */
  store?: boolean;
}

export interface LogoutOptions extends CallOptions {
  /** Client key to revoke in step (b); default: the access token's `sub` when it is a client key. */
  clientId?: string;
}

const enc = encodeURIComponent;

export class AuthApi {
  constructor(private readonly http: HttpClient) {}

  /** `GET /auth/health`. */
  health(options?: CallOptions): Promise<HealthResponse> {
    return this.http.data('/auth/health', options);
  }

  /** `GET /admin/identity` (bearer required). */
  identity(options?: CallOptions): Promise<IdentityResponse> {
    return this.http.data('/admin/identity', options);
  }

  /** `GET /auth/providers`. */
  providers(options?: CallOptions): Promise<ProvidersResponse> {
    return this.http.data('/auth/providers', options);
  }

  /** `GET /auth/login`: the login page's HTML. */
  loginPage(options?: CallOptions): Promise<string> {
    return this.http.text('/auth/login', options);
  }

  /** `POST /auth/token` with `user_password` credentials; stores and returns the pair. */
  async login(params: LoginParams, options?: CallOptions): Promise<Tokens> {
    const body: TokenRequest = {
      auth_method: 'user_password',
      public_key: params.username,
      client_name: params.clientName ?? DEFAULT_CLIENT_NAME,
      permissions: [],
      timestamp: Math.floor(Date.now() / 1000),
      provider_data: { username: params.username, password: params.password },
    };
    const response = await this.http.tokenResponse('/auth/token', { ...options, method: 'POST', body, auth: false });
    return this.store(response);
  }

  /** `POST /auth/refresh` with the stored pair (single-flight); stores and returns the new pair. */
  refresh(): Promise<Tokens> {
    return this.http.refreshTokens();
  }

  /** `POST /auth/mock-token` (development nodes only); stores the pair unless `store: false`. */
  async mockToken(request: MockTokenRequest, options: MockTokenOptions = {}): Promise<Tokens> {
    const { store = true, ...call } = options;
    const response = await this.http.tokenResponse('/auth/mock-token', {
      ...call,
      method: 'POST',
      body: request,
      refresh: false,
      revocation: false,
    });
    return store ? this.store(response) : tokensFromPair(response.data);
  }

  /**
   * The auth spec's logout procedure (Endpoints rule 5): (a) `POST /auth/logout
   * {refresh_token}`; (b) when a client id is known, `POST /admin/revoke
   * {client_id}`; (c) clear the stored tokens. (a) and (b) are best effort: any
   * failure (404 on a node without the route, 401 for an invalid token, network)
   * is recorded in the result and never stops (c). Throws only if clearing fails.
   */
  async logout(options: LogoutOptions = {}): Promise<LogoutResult> {
    const { clientId: explicitId, ...call } = options;
    const result: LogoutResult = { loggedOut: false, revoked: null, clientId: null, errors: [] };
    try {
      const tokens = await this.http.getTokens();
      const sessionCall = { ...call, method: 'POST', refresh: false, revocation: false } as const;
      if (tokens?.refreshToken) {
        try {
          await this.http.send('/auth/logout', { ...sessionCall, body: { refresh_token: tokens.refreshToken } });
          result.loggedOut = true;
        } catch (error) {
          result.errors.push(error);
        }
      }
      const clientId = explicitId ?? (tokens ? clientIdOf(tokens.accessToken) : undefined);
      if (clientId !== undefined) {
        result.clientId = clientId;
        try {
          await this.http.send('/admin/revoke', { ...sessionCall, body: { client_id: clientId } });
          result.revoked = true;
        } catch (error) {
          result.revoked = false;
          result.errors.push(error);
        }
      }
    } catch (error) {
      result.errors.push(error); // reading the store failed; still clear it below
    } finally {
      await this.http.clearTokens();
    }
    return result;
  }

  /** `POST /auth/logout {refresh_token}` alone (step (a) of logout), throwing on failure. */
  retireRefreshToken(refreshToken: string, options?: CallOptions): Promise<LogoutResponse> {
    return this.http.data('/auth/logout', {
      ...options,
      method: 'POST',
      body: { refresh_token: refreshToken },
      refresh: false,
      revocation: false,
    });
  }

  /**
   * `HEAD /auth/validate` with `Authorization: Bearer <token>` (default: the stored
   * access token); `options.method` asks with `GET` or `POST` instead. Never throws
   * for a non-2xx answer; reads the outcome from the status and the `X-Auth-*`
   * headers. Has no effect on the stored session.
   */
  async validate(token?: string, options: ValidateOptions = {}): Promise<ValidateResult> {
    const { method = 'HEAD', ...call } = options;
    const bearer = token ?? (await this.http.getTokens())?.accessToken;
    const response = await this.http.raw('/auth/validate', { ...call, method, auth: bearer ?? false });
    const permissions = response.headers.get('x-auth-permissions');
    return {
      valid: response.status >= 200 && response.status < 300,
      status: response.status,
      user: response.headers.get('x-auth-user'),
      permissions: permissions ? permissions.split(',').map((p) => p.trim()).filter(Boolean) : [],
      authError: response.headers.get('x-auth-error'),
    };
  }

  /** `POST /admin/revoke {client_id}`: revokes the key (and so every token) with that id. */
  revoke(clientId: string, options?: CallOptions): Promise<RevokeTokenResponse> {
    return this.http.data('/admin/revoke', { ...options, method: 'POST', body: { client_id: clientId } });
  }

  /** `GET /admin/keys`: every root key, revoked ones included. */
  listRootKeys(options?: CallOptions): Promise<RootKey[]> {
    return this.http.data('/admin/keys', options);
  }

  /** `POST /admin/keys`: create (or overwrite) a root key. */
  createRootKey(request: CreateKeyRequest, options?: CallOptions): Promise<CreateKeyResponse> {
    return this.http.data('/admin/keys', { ...options, method: 'POST', body: request });
  }

  /** `DELETE /admin/keys/{key_id}`: soft-revoke a root key (refused for the last active one). */
  deleteRootKey(keyId: string, options?: CallOptions): Promise<DeleteKeyResponse> {
    return this.http.data(`/admin/keys/${enc(keyId)}`, { ...options, method: 'DELETE' });
  }

  /** `GET /admin/keys/{key_id}/permissions` (root or client key). */
  getKeyPermissions(keyId: string, options?: CallOptions): Promise<PermissionResponse> {
    return this.http.data(`/admin/keys/${enc(keyId)}/permissions`, options);
  }

  /** `PUT /admin/keys/{key_id}/permissions {add, remove}`: apply a delta; answers the final list. */
  updateKeyPermissions(
    keyId: string,
    delta: UpdateKeyPermissionsRequest,
    options?: CallOptions,
  ): Promise<PermissionResponse> {
    return this.http.data(`/admin/keys/${enc(keyId)}/permissions`, { ...options, method: 'PUT', body: delta });
  }

  /** `GET /admin/keys/clients`: every client key, revoked ones included. */
  listClientKeys(options?: CallOptions): Promise<ClientKey[]> {
    return this.http.data('/admin/keys/clients', options);
  }

  /**
   * hearth: `GET /admin/keys/clients?details=true`, the client keys with `expires_at` and
   * `application_id` (an opt-in: the plain listing is the auth spec's ClientKey exactly).
   */
  listClientKeysWithDetails(options?: CallOptions): Promise<ClientKey[]> {
    return this.http.data('/admin/keys/clients?details=true', options);
  }

  /** `POST /admin/client-key`: mint a scoped client key; returns its TokenResponse (not stored). */
  createClientKey(request: GenerateClientKeyRequest = {}, options?: CallOptions): Promise<TokenResponse> {
    return this.http.tokenResponse('/admin/client-key', { ...options, method: 'POST', body: request });
  }

  /** `DELETE /admin/keys/{key_id}/clients/{client_id}`: soft-revoke a client key. */
  deleteClientKey(rootKeyId: string, clientId: string, options?: CallOptions): Promise<DeleteClientResponse> {
    return this.http.data(`/admin/keys/${enc(rootKeyId)}/clients/${enc(clientId)}`, {
      ...options,
      method: 'DELETE',
    });
  }

  private async store(response: TokenResponse): Promise<Tokens> {
    const tokens = tokensFromPair(response.data);
    await this.http.setTokens(tokens);
    return tokens;
  }
}
