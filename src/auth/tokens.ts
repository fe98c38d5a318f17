/**
 * JWT access/refresh tokens as the reference mints them (auth-wire §4.1): HS256 over the ASCII text
 * of the node's secret, `iss` = `aud` = issuer, `token_type`, `permissions`, optional `node_url`,
 * Unix-second `iat`/`exp`, UUID `jti`. hearth adds `gen`, the key's token generation, so that all
 * tokens of a key can be revoked at once without revoking the key (refresh-token reuse).
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { unixSecs, type Clock } from '../clock.ts';
import { unauthenticated } from '../errors.ts';

export type TokenType = 'access' | 'refresh';

export interface Claims {
  sub: string;
  iss: string;
  aud: string;
  exp: number;
  iat: number;
  jti: string;
  token_type: TokenType;
  permissions: string[];
  node_url?: string;
  gen?: number;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
}

export interface Lifetimes {
  accessSecs: number;
  refreshSecs: number;
}

export interface MintInput {
  sub: string;
  permissions: string[];
  nodeUrl?: string;
  generation: number;
  lifetimes: Lifetimes;
}

/** verified tokens remembered (an HMAC and a JSON parse saved per guarded request) */
const VERIFIED_CACHE_SIZE = 10_000;

export class TokenIssuer {
  private readonly key: Uint8Array;
  /**
   * token → its verified claims. Only what cannot change is cached (signature, issuer, audience,
   * type, claims); expiry is re-checked on every hit, and key state (revocation, generation) is
   * checked by the caller on every request anyway.
   */
  private readonly verified = new Map<string, Readonly<Claims>>();

  constructor(
    secret: string,
    private readonly issuer: string,
    private readonly leewaySecs: number,
    private readonly clock: Clock,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  async mint(input: MintInput): Promise<TokenPair> {
    const [access_token, refresh_token] = await Promise.all([
      this.sign(input, 'access', input.lifetimes.accessSecs),
      this.sign(input, 'refresh', input.lifetimes.refreshSecs),
    ]);
    return { access_token, refresh_token };
  }

  /**
   * Verifies signature, issuer, audience and type. With `ignoreExpiry` an expired token still
   * decodes (refresh must read the expired access token, auth-wire §2.2).
   */
  async verify(token: string, type: TokenType, opts: { ignoreExpiry?: boolean } = {}): Promise<Claims> {
    const hit = opts.ignoreExpiry ? undefined : this.cached(token, type);
    if (hit) return hit;
    let payload: Record<string, unknown>;
    try {
      const now = opts.ignoreExpiry ? new Date(0) : new Date(this.clock.now());
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: this.issuer,
        audience: this.issuer,
        clockTolerance: this.leewaySecs,
        currentDate: now,
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw unauthenticated('Invalid token: Token has expired', 'token_expired');
      throw unauthenticated('Invalid token: malformed or bad signature', 'invalid_token');
    }
    if (payload.token_type !== type) throw unauthenticated(`Invalid token: not an ${type} token`, 'invalid_token');
    const perms = payload.permissions;
    if (!Array.isArray(perms) || !perms.every((p) => typeof p === 'string')) {
      throw unauthenticated('Invalid token: permissions claim missing', 'invalid_token');
    }
    const claims = Object.freeze({ ...payload, permissions: Object.freeze([...perms]) }) as unknown as Claims;
    if (!opts.ignoreExpiry) {
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
    }
    return claims;
  }

  /**
   * The claims of a token verified before, of `type` and not expired now; undefined otherwise (the
   * caller then verifies it with {@link verify}, which gives the reason). The guard's synchronous
   * path: a cache hit answers exactly what `verify` would.
   */
  cached(token: string, type: TokenType): Claims | undefined {
    const hit = this.verified.get(token);
    // jose's rule: expired once exp <= now - tolerance
    return hit && hit.token_type === type && hit.exp + this.leewaySecs > unixSecs(this.clock) ? hit : undefined;
  }

  /** Seconds since the token's expiry, negative while it is still valid. */
  secondsPastExpiry(claims: Claims): number {
    return unixSecs(this.clock) - claims.exp;
  }

  private sign(input: MintInput, type: TokenType, ttl: number): Promise<string> {
    const iat = unixSecs(this.clock);
    const claims: Record<string, unknown> = { token_type: type, permissions: input.permissions, gen: input.generation };
    if (input.nodeUrl !== undefined) claims.node_url = input.nodeUrl;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(input.sub)
      .setIssuer(this.issuer)
      .setAudience(this.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .setJti(randomUUID())
      .sign(this.key);
  }
}

/**
 * Host binding of a token's `node_url` (auth-wire §4.5); true when the token binds no host. With
 * `nodeHosts` configured, the bound host must be one of them and the request's own headers do not
 * matter (a client cannot talk the node into another name); otherwise it is compared with the
 * request's host, as the reference does.
 */
export function hostMatches(nodeUrl: string | undefined, requestHost: string | undefined, nodeHosts: readonly string[] = []): boolean {
  if (!nodeUrl) return true;
  let bound: URL;
  try {
    bound = new URL(nodeUrl);
  } catch {
    return true; // a plain client name such as "mero-js-sdk" binds nothing
  }
  if (!bound.host) return true;
  if (nodeHosts.length > 0) return nodeHosts.some((h) => sameHost(bound, h));
  if (!requestHost) return false;
  // the reference always accepts its internal forward-auth host name
  if (parseHost(requestHost)?.hostname === 'auth') return true;
  return sameHost(bound, requestHost);
}

function parseHost(host: string): URL | undefined {
  try {
    return new URL(`http://${host.toLowerCase()}`);
  } catch {
    return undefined;
  }
}

/** `host` (with or without a port) names the bound URL's host; a port, when both give one, must agree. */
function sameHost(bound: URL, host: string): boolean {
  const req = parseHost(host);
  if (!req || req.hostname !== bound.hostname.toLowerCase()) return false;
  return !req.port || !bound.port || req.port === bound.port;
}
