/**
 * @module client/token-store
 *
 * Where the client keeps its token pair. The HTTP core reads the access token
 * for the bearer header, writes both tokens after a login or refresh (refresh
 * tokens rotate, auth-wire §2.2), and clears them on logout or a terminal auth
 * error. Implementations may be synchronous or asynchronous; a file-backed store
 * for the CLI and a `localStorage` store for browsers implement the same interface.
 */

/** A stored token pair. */
export interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Access-token expiry in epoch **milliseconds** (the JWT `exp` × 1000), when known. */
  expiresAt?: number;
}

export interface TokenStore {
  get(): Promise<Tokens | null> | Tokens | null;
  set(tokens: Tokens): Promise<void> | void;
  clear(): Promise<void> | void;
}

/** Keeps the token pair in memory for the life of the process or page. */
export class MemoryTokenStore implements TokenStore {
  private tokens: Tokens | null;

  constructor(initial: Tokens | null = null) {
    this.tokens = initial ? { ...initial } : null;
  }

  get(): Tokens | null {
    return this.tokens ? { ...this.tokens } : null;
  }

  set(tokens: Tokens): void {
    this.tokens = { ...tokens };
  }

  clear(): void {
    this.tokens = null;
  }
}
