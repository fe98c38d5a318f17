/**
 * Token flows of the auth surface (auth spec "Endpoints"; auth-wire §2.1–§2.4, §4, §11): login
 * with the user_password provider, refresh with single-use refresh tokens, logout, validation,
 * development mock tokens, and bearer authentication for every guarded route.
 */
import { unixSecs, type Clock } from '../clock.ts';
import type { AuthConfig } from '../config/config.ts';
import { badRequest, forbidden, rateLimited, unauthenticated, HearthError, type AuthReason } from '../errors.ts';
import { bindingOf, type Binding } from './binding.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { formatPermission, parseGrants, satisfies } from './permissions.ts';
import { LoginLimiter } from './rate-limit.ts';
import { nodeUrlProblem } from './urls.ts';
import { identifierOnly, printableAscii } from './sanitize.ts';
import { Serial } from '../serial.ts';
import { isValidKey, type KeyRecord, type KeyStore } from './store.ts';
import { hostMatches, type Claims, type Lifetimes, type TokenIssuer, type TokenPair } from './tokens.ts';
import type { RequestOrigin } from '../http/request.ts';

export interface Principal {
  keyId: string;
  keyType: 'root' | 'client';
  /** the root key this principal acts under (itself for root keys) */
  rootKeyId: string;
  /** claims ∩ live key permissions (auth-wire §4.3) */
  permissions: string[];
  binding: Binding;
}

export interface LoginInput {
  auth_method: string;
  public_key: string;
  client_name: string;
  provider_data: unknown;
}

export interface MockInput {
  client_name: string;
  permissions?: string[];
  node_url?: string;
}

export interface AuthDeps {
  keys: KeyStore;
  tokens: TokenIssuer;
  clock: Clock;
  config: AuthConfig;
}

/** Longest string fields of a login: room for any real name, far from a cost. */
const MAX_LOGIN_FIELD = 256;
/** (node URL, Host) answers remembered: parsing both as URLs was a large part of a guarded request */
const HOST_CHECKS_KEPT = 1_000;

export class AuthService {
  readonly serial = new Serial();
  private readonly limiter: LoginLimiter;
  private readonly hostChecks = new Map<string, boolean>();

  constructor(private readonly d: AuthDeps) {
    const c = d.config;
    this.limiter = new LoginLimiter(d.clock, {
      perUserAddress: c.loginFailureLimit,
      perAddress: c.loginAddressFailureLimit,
      perUser: c.loginUserFailureLimit,
      windowSecs: c.loginFailureWindowSecs,
      maxBackoffSecs: c.loginMaxBackoffSecs,
    });
  }

  lifetimesOf(key: KeyRecord): Lifetimes {
    const c = this.d.config;
    return key.type === 'client'
      ? { accessSecs: c.clientAccessTokenTtlSecs, refreshSecs: c.clientRefreshTokenTtlSecs }
      : { accessSecs: c.accessTokenTtlSecs, refreshSecs: c.refreshTokenTtlSecs };
  }

  mintFor(key: KeyRecord, nodeUrl?: string): Promise<TokenPair> {
    return this.d.tokens.mint({
      sub: key.id,
      permissions: key.permissions,
      nodeUrl,
      generation: key.generation,
      lifetimes: this.lifetimesOf(key),
    });
  }

  /** Whether a token that names `nodeUrl` may be used on a request naming `requestHost` (auth-wire §4.5). */
  private hostOk(nodeUrl: string | undefined, requestHost: string | undefined): boolean {
    if (nodeUrl === undefined) return true;
    // the answer depends only on the two strings (node_hosts is fixed for the node's life)
    const key = `${nodeUrl}\u0000${requestHost ?? ''}`;
    let ok = this.hostChecks.get(key);
    if (ok === undefined) {
      ok = hostMatches(nodeUrl, requestHost, this.d.config.nodeHosts);
      if (this.hostChecks.size >= HOST_CHECKS_KEPT) this.hostChecks.clear();
      this.hostChecks.set(key, ok);
    }
    return ok;
  }

  /**
   * `POST /auth/token`. Throttled per username and client address (rate-limit.ts), never by the
   * caller-chosen `public_key`.
   */
  async login(input: LoginInput, origin: RequestOrigin = { host: undefined }): Promise<TokenPair> {
    const method = identifierOnly(input.auth_method);
    if (!method) throw badRequest('Authentication method must contain valid characters');
    if (!printableAscii(input.public_key)) throw badRequest('Public key cannot be empty after sanitization');
    if (!printableAscii(input.client_name)) throw badRequest('Client name cannot be empty after sanitization');
    for (const [field, value] of [['auth_method', input.auth_method], ['public_key', input.public_key], ['client_name', input.client_name]] as const) {
      if (value.length > MAX_LOGIN_FIELD) throw badRequest(`Invalid request: body.${field} must be at most ${MAX_LOGIN_FIELD} characters`);
    }
    const pd = input.provider_data;
    const named = typeof pd === 'object' && pd !== null ? (pd as Record<string, unknown>).username : undefined;
    const username = typeof named === 'string' ? named.slice(0, MAX_LOGIN_FIELD) : '';
    const address = origin.address ?? '';
    const wait = this.limiter.retryAfter(username, address);
    if (wait > 0) throw rateLimited('Too many failed login attempts; please try again later', wait);
    try {
      const key = await this.checkCredentials(method, input.provider_data);
      const bound = key.nodeUrl ? hostOfUrl(key.nodeUrl) : undefined;
      if (bound && hostOfUrl(input.client_name) !== bound) throw new Error('Key is not valid for this node');
      this.limiter.succeed(username, address);
      return await this.mintFor(key, input.client_name);
    } catch (err) {
      this.limiter.fail(username, address);
      const cause = err instanceof Error ? err.message : String(err);
      throw unauthenticated(`Authentication failed: ${cause}`);
    }
  }

  private dummy?: Promise<string>;
  private dummyHash(): Promise<string> {
    this.dummy ??= hashPassword('hearth-timing-equaliser');
    return this.dummy;
  }

  /** The valid root key of this username whose password matches (a username may have several, one per password). */
  private async checkCredentials(method: string, data: unknown): Promise<KeyRecord> {
    if (method !== 'user_password') {
      throw new Error(`Invalid request: Unsupported authentication method: ${method}. Supported methods: user_password`);
    }
    const pd = (data ?? {}) as Record<string, unknown>;
    for (const field of ['username', 'password'] as const) {
      if (typeof pd[field] !== 'string') throw new Error(`Invalid username/password data: missing field \`${field}\``);
    }
    const username = pd.username as string;
    const password = pd.password as string;
    if ([...password].length > 128) throw new Error('Invalid username/password data: password too long');
    const now = unixSecs(this.d.clock);
    const candidates = (await this.d.keys.byUsername(username)).filter((k) => k.type === 'root' && k.passwordHash && isValidKey(k, now));
    // an unknown user costs one scrypt too, so timing does not tell which usernames exist
    if (candidates.length === 0) await verifyPassword(password, await this.dummyHash());
    for (const key of candidates) {
      if (await verifyPassword(password, key.passwordHash!)) return key;
    }
    throw new Error('Authentication failed: Invalid username or password');
  }

  /**
   * Whether the key behind a token may still act, and with what (auth-wire §4.3, hardened): the
   * key exists, is neither revoked nor expired, the token's generation is current, and for a client
   * key the same holds for the root key it was issued under, whose live permissions also bound the
   * client's. Every refusal is a 401 (auth spec: "401: the token is invalid"); `token_revoked` tells
   * clients (mero-js) to drop their tokens rather than refresh.
   */
  private async liveKey(claims: Claims, fail: Fail): Promise<{ key: KeyRecord; root: KeyRecord }> {
    const now = unixSecs(this.d.clock);
    const key = await this.d.keys.get(claims.sub);
    checkKey(claims, key, now, fail);
    if (key.type !== 'client') return { key, root: key };
    const root = await this.d.keys.get(key.rootKeyId ?? '');
    checkRoot(root, now, fail);
    return { key, root };
  }

  /**
   * {@link liveKey} from the key cache alone: the same checks in the same order, or undefined when
   * a record it needs is not cached (the caller then takes the path that reads the store).
   */
  private liveKeyCached(claims: Claims, fail: Fail): { key: KeyRecord; root: KeyRecord } | undefined {
    const now = unixSecs(this.d.clock);
    const key = this.d.keys.cached(claims.sub);
    if (!key) return undefined;
    checkKey(claims, key, now, fail);
    if (key.type !== 'client') return { key, root: key };
    const root = this.d.keys.cached(key.rootKeyId ?? '');
    if (!root) return undefined;
    checkRoot(root, now, fail);
    return { key, root };
  }

  async refresh(accessToken: string, refreshToken: string, origin: RequestOrigin): Promise<TokenPair> {
    const access = await this.d.tokens.verify(accessToken, 'access', { ignoreExpiry: true }).catch((e: Error) => {
      throw unauthenticated(`Invalid access token: ${e.message}`);
    });
    // Only an expired access token may be refreshed; no X-Auth-Error here, so SDKs do not loop.
    if (this.d.tokens.secondsPastExpiry(access) <= this.d.config.leewaySecs) throw unauthenticated('Access token still valid');
    const refresh = await this.d.tokens.verify(refreshToken, 'refresh').catch((e: Error) => {
      throw unauthenticated(`Invalid refresh token: ${e.message}`);
    });
    if (refresh.sub !== access.sub) throw unauthenticated('Access and refresh tokens do not belong to the same subject');
    if (!this.hostOk(refresh.node_url, origin.host)) throw forbidden('Token is bound to another node', 'invalid_node');
    return this.serial.run(async () => {
      const now = unixSecs(this.d.clock);
      const used = await this.d.keys.consumed(refresh.jti);
      const key = await this.d.keys.get(refresh.sub);
      if (used?.reason === 'logout') throw unauthenticated('Invalid refresh token: it was retired by a logout');
      if (used) {
        await this.revokeFamily(key, now);
        throw new HearthError('unauthenticated', 'Refresh token reuse detected; re-authentication required', {
          authReason: 'token_reuse',
        });
      }
      const live = await this.liveKey(refresh, (m, reason) => unauthenticated(`Invalid refresh token: ${m}`, reason));
      await this.d.keys.consume(refresh.jti, { exp: refresh.exp, reason: 'refresh' });
      // a sign-in session's key in use stays alive; one left unused expires (keys-service.ts)
      const idle = live.key.idle;
      if (idle) await this.d.keys.put({ ...live.key, expiresAt: Math.min(idle.endsAt, now + idle.secs) });
      return this.mintFor(live.key, refresh.node_url);
    });
  }

  /**
   * A replayed refresh token means the pair leaked or two holders raced: the family ends. A client
   * key is revoked (as the reference); a root key only has its outstanding tokens revoked, so the
   * owner can log in again (the reference's fix for bricked nodes, product.md A1).
   */
  private async revokeFamily(key: KeyRecord | undefined, now: number): Promise<void> {
    if (!key) return;
    const next: KeyRecord =
      key.type === 'client' ? { ...key, revokedAt: key.revokedAt ?? now } : { ...key, generation: key.generation + 1 };
    await this.d.keys.put(next);
  }

  /** `POST /auth/logout`: a refresh token of a revoked, expired or unknown key is invalid (auth spec: 401). */
  async logout(refreshToken: string): Promise<void> {
    const claims = await this.d.tokens.verify(refreshToken, 'refresh').catch((e: Error) => {
      throw unauthenticated(`Invalid refresh token: ${e.message}`);
    });
    await this.serial.run(async () => {
      if (await this.d.keys.consumed(claims.jti)) throw unauthenticated('Invalid refresh token: already used');
      await this.liveKey(claims, (m, reason) => unauthenticated(`Invalid refresh token: ${m}`, reason));
      await this.d.keys.consume(claims.jti, { exp: claims.exp, reason: 'logout' });
    });
  }

  /** `/auth/validate` semantics (auth-wire §2.3): revoked, expired and unknown keys read as invalid (401). */
  async validate(token: string | undefined, origin: RequestOrigin): Promise<Claims> {
    if (!token) throw unauthenticated('No token provided', 'missing_token');
    const claims = await this.d.tokens.verify(token, 'access');
    if (!this.hostOk(claims.node_url, origin.host)) throw forbidden('Token is bound to another node', 'invalid_node');
    await this.liveKey(claims, (m, reason) => unauthenticated(m, reason));
    return claims;
  }

  /** Bearer authentication for guarded routes (auth-wire §4.3). */
  async authenticate(token: string, origin: RequestOrigin): Promise<Principal> {
    const claims = await this.d.tokens.verify(token, 'access');
    if (!this.hostOk(claims.node_url, origin.host)) throw unauthenticated('Token is bound to another node', 'invalid_token');
    const { key, root } = await this.liveKey(claims, bearerFail);
    return this.principalOf(claims, key, root);
  }

  /**
   * {@link authenticate} without waiting, for a token verified before whose keys are cached (every
   * guarded request after a client's first): the same principal, or the same error thrown, as
   * `authenticate` would give; undefined when something it needs is not cached, and then the caller
   * calls `authenticate`. A key write replaces the cached record when it completes, so a revoked
   * key or a bumped generation is refused from the next request on, as by `authenticate`.
   */
  authenticateCached(token: string, origin: RequestOrigin): Principal | undefined {
    const claims = this.d.tokens.cached(token, 'access');
    if (!claims) return undefined;
    if (!this.hostOk(claims.node_url, origin.host)) throw unauthenticated('Token is bound to another node', 'invalid_token');
    const live = this.liveKeyCached(claims, bearerFail);
    return live && this.principalOf(claims, live.key, live.root);
  }

  /**
   * (claims, key record, root record) → principal, remembered per claims object while both records
   * are the same objects: cached claims and key records are frozen and a key write caches a new
   * record, so an unchanged triple means an unchanged answer. Principals are frozen (shared).
   */
  private readonly principals = new WeakMap<Claims, { key: KeyRecord; root: KeyRecord; principal: Principal }>();

  private principalOf(claims: Claims, key: KeyRecord, root: KeyRecord): Principal {
    const memo = this.principals.get(claims);
    if (memo && memo.key === key && memo.root === root) return memo.principal;
    const live = new Set(key.permissions);
    // a client key holds only what its root key still holds
    const permissions = claims.permissions.filter((p) => live.has(p) && (key.type !== 'client' || satisfies(root.permissions, p)));
    const binding = bindingOf(permissions, key.applicationId ?? null);
    const principal: Principal = Object.freeze({
      keyId: key.id,
      keyType: key.type,
      rootKeyId: key.rootKeyId ?? key.id,
      permissions: Object.freeze(permissions) as string[],
      binding: Object.freeze({
        contexts: Object.freeze(binding.contexts) as string[],
        groups: Object.freeze(binding.groups) as string[],
        applications: Object.freeze(binding.applications) as string[],
      }),
    });
    if (Object.isFrozen(claims) && Object.isFrozen(key) && Object.isFrozen(root)) this.principals.set(claims, { key, root, principal });
    return principal;
  }

  /** Development nodes only (auth spec rule 2); the route is refused elsewhere. */
  async mock(input: MockInput): Promise<{ pair: TokenPair; keyId: string }> {
    const permissions = parseGrants(input.permissions ?? ['admin'], 'permissions').map(formatPermission);
    const name = identifierOnly(input.client_name).slice(0, 64);
    if (!name) throw badRequest('client_name must contain valid characters');
    const urlProblem = nodeUrlProblem(input.node_url, 'node_url');
    if (urlProblem) throw badRequest(urlProblem);
    return this.serial.run(async () => {
      const now = unixSecs(this.d.clock);
      let id = `mock_${name}_${now}`;
      for (let n = 2; await this.d.keys.get(id); n++) id = `mock_${name}_${now}_${n}`;
      const key: KeyRecord = {
        id,
        type: 'root',
        publicKey: `mock_public_key_${now}`,
        authMethod: 'mock_auth',
        rootKeyId: null,
        name: null,
        permissions,
        nodeUrl: input.node_url,
        createdAt: now,
        revokedAt: null,
        expiresAt: null,
        generation: 0,
      };
      await this.d.keys.put(key);
      return { pair: await this.mintFor(key, input.node_url), keyId: id };
    });
  }
}

type Fail = (message: string, reason: AuthReason) => HearthError;
const bearerFail: Fail = (m, reason) => unauthenticated(m, reason);

/** The checks of a token's own key (auth-wire §4.3, hardened): throws `fail(...)` for the first that fails. */
function checkKey(claims: Claims, key: KeyRecord | undefined, now: number, fail: Fail): asserts key is KeyRecord {
  if (!key) throw fail('Key not found', 'invalid_token');
  if (key.revokedAt !== null) throw fail('Key has been revoked', 'token_revoked');
  if (key.expiresAt !== null && key.expiresAt <= now) throw fail('Key has expired', 'invalid_token');
  if ((claims.gen ?? 0) < key.generation) throw fail('Token has been revoked', 'token_revoked');
}

/** The checks of the root key a client key was issued under. */
function checkRoot(root: KeyRecord | undefined, now: number, fail: Fail): asserts root is KeyRecord {
  if (!root) throw fail('The root key this client key was issued under no longer exists', 'invalid_token');
  if (root.revokedAt !== null) throw fail('The root key this client key was issued under has been revoked', 'token_revoked');
  if (root.expiresAt !== null && root.expiresAt <= now) throw fail('The root key this client key was issued under has expired', 'invalid_token');
}

function hostOfUrl(s: string): string | undefined {
  try {
    return new URL(s).host.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}
