/**
 * @module client/session
 *
 * The token session behind the HTTP core: the store, the single-flight refresh
 * and terminal revocation (auth-wire §9.3–§9.4).
 *
 * - {@link Session.refresh} runs at most one `POST /auth/refresh` at a time;
 *   concurrent callers share it. The flight re-reads the store first: when the
 *   stored access token is no longer the one the caller used (another call
 *   rotated the pair, or a new login happened), that pair is adopted without a
 *   refresh, so a consumed refresh token is never replayed. Both new tokens are
 *   stored, since refresh tokens rotate.
 * - {@link Session.revoke} clears the store, but only while it still holds the
 *   token that was rejected, and calls `onAuthRevoked` once for that clearing.
 */

import { AuthRevokedError, type HttpError, type HttpErrorInit } from './errors.ts';
import type { TokenPair } from './auth-types.ts';
import { tokensFromPair } from './jwt.ts';
import type { Tokens, TokenStore } from './token-store.ts';

/** Performs `POST /auth/refresh` for a stored pair and returns the new wire pair. */
export type RefreshCall = (tokens: Tokens) => Promise<TokenPair>;

export class Session {
  private flight: Promise<Tokens | null> | undefined;

  constructor(
    readonly store: TokenStore,
    private readonly refreshCall: RefreshCall,
    private readonly onAuthRevoked?: (error: AuthRevokedError) => void | Promise<void>,
  ) {}

  async get(): Promise<Tokens | null> {
    return (await this.store.get()) ?? null;
  }

  /**
   * Renews the stored pair (single-flight). `usedAccessToken` is the token a
   * rejected call carried; omit it to force a refresh. Resolves `null` when no
   * refresh token is stored.
   */
  refresh(usedAccessToken?: string): Promise<Tokens | null> {
    this.flight ??= this.run(usedAccessToken).finally(() => {
      this.flight = undefined;
    });
    return this.flight;
  }

  private async run(usedAccessToken: string | undefined): Promise<Tokens | null> {
    const current = await this.get();
    if (!current?.refreshToken) return null;
    if (usedAccessToken !== undefined && current.accessToken !== usedAccessToken) return current;
    const tokens = tokensFromPair(await this.refreshCall(current));
    await this.store.set(tokens);
    return tokens;
  }

  /**
   * Turns a `token_reuse`/`token_revoked` answer into {@link AuthRevokedError}.
   * `usedAccessToken` is the bearer the call sent; `undefined` means the call
   * used the stored refresh token (the refresh itself), which always matches.
   */
  async revoke(error: HttpError, usedAccessToken: string | undefined): Promise<AuthRevokedError> {
    const revoked = new AuthRevokedError(errorInit(error));
    const current = await this.get();
    if (current && (usedAccessToken === undefined || current.accessToken === usedAccessToken)) {
      await this.store.clear();
      try {
        await this.onAuthRevoked?.(revoked);
      } catch {
        // A failing listener must not replace the terminal error the caller needs to see.
      }
    }
    return revoked;
  }
}

/** The constructor fields of an existing HttpError (to rewrap it). */
export function errorInit(error: HttpError): HttpErrorInit {
  const { method, url, status, statusText, headers, bodyText, body } = error;
  return { method, url, status, statusText, headers, bodyText, body };
}
