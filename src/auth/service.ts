/**
 * Token flows of the auth surface (auth spec "Endpoints"; auth-wire §2.1–§2.4, §4, §11): login
 * with the user_password provider, refresh with single-use refresh tokens, logout, validation,
 * development mock tokens, and bearer authentication for every guarded route.
 */
import { unixSecs, type Clock } from '../clock.ts';
import type { AuthConfig } from '../config/config.ts';
import { badRequest, forbidden, rateLimited, unauthenticated, HearthError } from '../errors.ts';
import { bindingOf, type Binding } from './binding.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { isValidPermission } from './permissions.ts';
import { LoginLimiter } from './rate-limit.ts';
import { identifierOnly, printableAscii } from './sanitize.ts';
import { Serial } from './serial.ts';
import { isValidKey, type KeyRecord, type KeyStore } from './store.ts';
import { hostMatches, type Claims, type Lifetimes, type TokenIssuer, type TokenPair } from './tokens.ts';

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

export class AuthService {
  readonly serial = new Serial();
  private readonly limiter: LoginLimiter;

  constructor(private readonly d: AuthDeps) {
    this.limiter = new LoginLimiter(d.clock, d.config.loginFailureLimit, d.config.loginFailureWindowSecs * 1000);
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

  async login(input: LoginInput): Promise<TokenPair> {
    const bucket = LoginLimiter.bucket(input.auth_method, input.public_key);
    const method = identifierOnly(input.auth_method);
    if (!method) throw badRequest('Authentication method must contain valid characters');
    if (!printableAscii(input.public_key)) throw badRequest('Public key cannot be empty after sanitization');
    if (!printableAscii(input.client_name)) throw badRequest('Client name cannot be empty after sanitization');
    const wait = this.limiter.retryAfter(bucket);
    if (wait > 0) {
      this.limiter.fail(bucket);
      throw rateLimited('Too many failed login attempts; please try again later', wait);
    }
    try {
      const key = await this.checkCredentials(method, input.provider_data);
      const bound = key.nodeUrl ? hostOfUrl(key.nodeUrl) : undefined;
      if (bound && hostOfUrl(input.client_name) !== bound) throw new Error('Key is not valid for this node');
      this.limiter.succeed(bucket);
      return await this.mintFor(key, input.client_name);
    } catch (err) {
      this.limiter.fail(bucket);
      const cause = err instanceof Error ? err.message : String(err);
      throw unauthenticated(`Authentication failed: ${cause}`);
    }
  }

  private dummy?: Promise<string>;
  private dummyHash(): Promise<string> {
    this.dummy ??= hashPassword('hearth-timing-equaliser');
    return this.dummy;
  }

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
    const key = await this.d.keys.byUsername(username);
    // an unknown user costs one scrypt too, so timing does not tell which usernames exist
    const ok = (await verifyPassword(password, key?.passwordHash ?? (await this.dummyHash()))) && key?.passwordHash !== undefined;
    if (!ok || !key || key.type !== 'root' || !isValidKey(key, unixSecs(this.d.clock))) {
      throw new Error('Authentication failed: Invalid username or password');
    }
    return key;
  }

  async refresh(accessToken: string, refreshToken: string, requestHost: string | undefined): Promise<TokenPair> {
    const access = await this.d.tokens.verify(accessToken, 'access', { ignoreExpiry: true }).catch((e: Error) => {
      throw unauthenticated(`Invalid access token: ${e.message}`);
    });
    // Only an expired access token may be refreshed; no X-Auth-Error here, so SDKs do not loop.
    if (this.d.tokens.secondsPastExpiry(access) <= this.d.config.leewaySecs) throw unauthenticated('Access token still valid');
    const refresh = await this.d.tokens.verify(refreshToken, 'refresh').catch((e: Error) => {
      throw unauthenticated(`Invalid refresh token: ${e.message}`);
    });
    if (refresh.sub !== access.sub) throw unauthenticated('Access and refresh tokens do not belong to the same subject');
    if (!hostMatches(refresh.node_url, requestHost)) throw forbidden('Token is bound to another node', 'invalid_node');
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
      if (!key || !isValidKey(key, now)) throw unauthenticated('Invalid refresh token: Key not found', 'invalid_token');
      if ((refresh.gen ?? 0) < key.generation) throw forbidden('Invalid refresh token: revoked', 'token_revoked');
      await this.d.keys.consume(refresh.jti, { exp: refresh.exp, reason: 'refresh' });
      return this.mintFor(key, refresh.node_url);
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

  async logout(refreshToken: string): Promise<void> {
    const claims = await this.d.tokens.verify(refreshToken, 'refresh').catch((e: Error) => {
      throw unauthenticated(`Invalid refresh token: ${e.message}`);
    });
    await this.serial.run(async () => {
      if (await this.d.keys.consumed(claims.jti)) throw unauthenticated('Invalid refresh token: already used');
      await this.d.keys.consume(claims.jti, { exp: claims.exp, reason: 'logout' });
    });
  }

  /** `/auth/validate` semantics (auth-wire §2.3): revoked and unknown keys read as invalid. */
  async validate(token: string | undefined, requestHost: string | undefined): Promise<Claims> {
    if (!token) throw unauthenticated('No token provided', 'missing_token');
    const claims = await this.d.tokens.verify(token, 'access');
    if (!hostMatches(claims.node_url, requestHost)) throw forbidden('Token is bound to another node', 'invalid_node');
    const key = await this.d.keys.get(claims.sub);
    if (!key || !isValidKey(key, unixSecs(this.d.clock)) || (claims.gen ?? 0) < key.generation) {
      throw unauthenticated('Key not found', 'invalid_token');
    }
    return claims;
  }

  /** Bearer authentication for guarded routes (auth-wire §4.3). */
  async authenticate(token: string, requestHost: string | undefined): Promise<Principal> {
    const claims = await this.d.tokens.verify(token, 'access');
    if (!hostMatches(claims.node_url, requestHost)) throw unauthenticated('Token is bound to another node', 'invalid_token');
    const key = await this.d.keys.get(claims.sub);
    if (!key) throw unauthenticated('Key not found', 'invalid_token');
    if (key.revokedAt !== null) throw forbidden('Key has been revoked', 'token_revoked');
    if (key.expiresAt !== null && key.expiresAt <= unixSecs(this.d.clock)) throw unauthenticated('Key has expired', 'invalid_token');
    if ((claims.gen ?? 0) < key.generation) throw forbidden('Token has been revoked', 'token_revoked');
    const live = new Set(key.permissions);
    const permissions = claims.permissions.filter((p) => live.has(p));
    return {
      keyId: key.id,
      keyType: key.type,
      rootKeyId: key.rootKeyId ?? key.id,
      permissions,
      binding: bindingOf(permissions, key.applicationId ?? null),
    };
  }

  /** Development nodes only (auth spec rule 2); the route is refused elsewhere. */
  async mock(input: MockInput): Promise<{ pair: TokenPair; keyId: string }> {
    const permissions = input.permissions ?? ['admin'];
    const bad = permissions.find((p) => !isValidPermission(p));
    if (bad !== undefined) throw badRequest(`Invalid permission format: ${bad}`);
    const name = identifierOnly(input.client_name);
    if (!name) throw badRequest('client_name must contain valid characters');
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

function hostOfUrl(s: string): string | undefined {
  try {
    return new URL(s).host.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}
