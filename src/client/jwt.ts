/**
 * @module client/jwt
 *
 * Reads (never verifies) the claims of the node's JWTs: `exp` for the stored
 * expiry and `sub` to learn a client key's id for logout step (b). The node's
 * claims are listed in auth-wire §4.1.
 */

import type { Tokens } from './token-store.ts';

/** The claims the node puts in its tokens (auth-wire §4.1). */
export interface JwtClaims {
  sub?: string;
  iss?: string;
  aud?: string;
  exp?: number;
  iat?: number;
  jti?: string;
  token_type?: 'access' | 'refresh' | string;
  permissions?: string[];
  node_url?: string;
  [claim: string]: unknown;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Decodes a JWT's payload segment (base64url JSON). Returns `null` when it is not a JWT. */
export function decodeJwtClaims(token: string): JwtClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const claims: unknown = JSON.parse(base64UrlDecode(parts[1]));
    return claims && typeof claims === 'object' && !Array.isArray(claims) ? (claims as JwtClaims) : null;
  } catch {
    return null;
  }
}

/** Decodes base64url (padding optional) to a UTF-8 string. */
export function base64UrlDecode(input: string): string {
  const base64 = input.replace(/-/g, '+').replace(/_/g, '/');
  const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/** Access-token expiry in epoch milliseconds, from its `exp` claim. */
export function tokenExpiresAt(accessToken: string): number | undefined {
  const exp = decodeJwtClaims(accessToken)?.exp;
  return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
}

/**
 * The client-key id carried by an access token: its `sub` when that is a UUID
 * (client keys are UUIDv4; root keys are 64 hex, mock keys `mock_<name>_<ts>`).
 */
export function clientIdOf(accessToken: string): string | undefined {
  const sub = decodeJwtClaims(accessToken)?.sub;
  return typeof sub === 'string' && UUID.test(sub) ? sub : undefined;
}

/** Builds the stored form of a wire token pair. */
export function tokensFromPair(pair: { access_token: string; refresh_token: string }): Tokens {
  const tokens: Tokens = { accessToken: pair.access_token, refreshToken: pair.refresh_token };
  const expiresAt = tokenExpiresAt(pair.access_token);
  if (expiresAt !== undefined) tokens.expiresAt = expiresAt;
  return tokens;
}
