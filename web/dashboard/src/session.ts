/**
 * The dashboard's session (issue #16: "log in through the existing login flow; refresh tokens
 * silently; a revoked session sends the user to the login page with the reason").
 *
 * Signing in is the node's own login page with a callback to the dashboard: it asks for the
 * password, mints a client key with `admin` for the dashboard and hands its tokens back in the URL
 * fragment (product.md B7). The tokens live in `localStorage`; the SDK refreshes them on
 * `token_expired` and, on `token_revoked`/`token_reuse`, clears them — then the user is sent to
 * the login page with the reason, which the page shows.
 */
import { AuthRevokedError, clientIdOf, createClient, HttpError, type Client, type Tokens, type TokenStore } from '../../../src/client/index.ts';

/** the login page reads it too, to reuse this session's key when signing in again (web/login.html) */
const STORE_KEY = 'hearth.dashboard.tokens';

/** The SDK's token store in `localStorage` (every rotation is written, so a reload keeps the session). */
export class LocalTokenStore implements TokenStore {
  get(): Tokens | null {
    try {
      const raw = localStorage.getItem(STORE_KEY);
      const tokens = raw ? (JSON.parse(raw) as Tokens) : null;
      return tokens && typeof tokens.accessToken === 'string' && typeof tokens.refreshToken === 'string' ? tokens : null;
    } catch {
      return null;
    }
  }
  set(tokens: Tokens): void {
    localStorage.setItem(STORE_KEY, JSON.stringify(tokens));
  }
  clear(): void {
    localStorage.removeItem(STORE_KEY);
  }
}

/** Takes the tokens the login page handed over in the fragment, and removes them from the address bar. */
export function takeHandedTokens(store: TokenStore): boolean {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const accessToken = fragment.get('access_token');
  const refreshToken = fragment.get('refresh_token');
  if (!accessToken || !refreshToken) return false;
  store.set({ accessToken, refreshToken });
  history.replaceState(history.state, '', location.pathname + location.search);
  return true;
}

/** Why the user is sent to the login page; the login page words each one. */
export type LoginReason = 'token_revoked' | 'token_reuse' | 'token_expired' | 'invalid_token' | 'signed_out';

/**
 * The login page's address, coming back to this very page: its query too (the contexts page keeps
 * the selected context there), so signing in again lands where the user was.
 */
export function loginUrl(reason?: string, here: Pick<Location, 'origin' | 'pathname' | 'search'> = location): string {
  const params = new URLSearchParams({ 'callback-url': `${here.origin}${here.pathname}${here.search}`, permissions: 'admin' });
  if (reason) params.set('reason', reason);
  return `/auth/login?${params}`;
}

let leaving = false;

/** Sends the browser to the login page (once: several failing calls make one redirect). */
export function goToLogin(reason?: string): void {
  if (leaving) return;
  leaving = true;
  location.replace(loginUrl(reason));
}

/** The reason to give for an auth failure, or undefined when the error is not one that ends the session. */
export function sessionEndReason(err: unknown): string | undefined {
  if (err instanceof AuthRevokedError) return err.authError ?? 'token_revoked';
  if (err instanceof HttpError && err.status === 401) return err.authError === 'token_expired' ? 'token_expired' : (err.authError ?? 'invalid_token');
  return undefined;
}

export interface Session {
  client: Client;
  store: TokenStore;
  /** the client key id of this session (the access token's subject) */
  keyId(): string | undefined;
  signOut(): Promise<void>;
}

export function createSession(): Session {
  const store = new LocalTokenStore();
  const client = createClient({
    baseUrl: location.origin,
    tokenStore: store,
    onAuthRevoked: (err) => goToLogin(err.authError ?? 'token_revoked'),
  });
  return {
    client,
    store,
    keyId: () => {
      const token = store.get()?.accessToken;
      return token ? clientIdOf(token) : undefined;
    },
    signOut: async () => {
      // ends the session on the node and revokes the dashboard's client key, then forgets the tokens
      await client.auth.logout().catch(() => undefined);
      store.clear();
      goToLogin('signed_out');
    },
  };
}
