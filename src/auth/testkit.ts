/** Builds the auth services over an in-memory store and a settable clock, for unit tests. */
import type { Clock } from '../clock.ts';
import { defaultConfig, type AuthConfig } from '../config/config.ts';
import { MemoryStore } from '../store/memory.ts';
import { KeysService } from './keys-service.ts';
import { AuthService, type Principal } from './service.ts';
import { KeyStore } from './store.ts';
import { TokenIssuer } from './tokens.ts';

export class FakeClock implements Clock {
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.ms;
  }
  advance(secs: number): void {
    this.ms += secs * 1000;
  }
}

export async function authKit(overrides: Partial<AuthConfig> = {}) {
  const clock = new FakeClock();
  const config = { ...defaultConfig('t').auth, ...overrides };
  const store = new MemoryStore();
  await store.open();
  const keyStore = new KeyStore(store);
  const tokens = new TokenIssuer('test-secret-test-secret-test-secret', config.issuer, config.leewaySecs, clock);
  const auth = new AuthService({ keys: keyStore, tokens, clock, config });
  const keys = new KeysService({ keys: keyStore, clock, config, auth });
  await keys.provisionAdmin('dev', 'dev-password');
  const login = () =>
    auth.login({ auth_method: 'user_password', public_key: 'dev', client_name: 'test', provider_data: { username: 'dev', password: 'dev-password' } });
  const principalOf = (accessToken: string): Promise<Principal> => auth.authenticate(accessToken, { host: '127.0.0.1' });
  return { clock, config, store, keyStore, tokens, auth, keys, login, principalOf };
}

export const subOf = (jwt: string): string => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).sub;
