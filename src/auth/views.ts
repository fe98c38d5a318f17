/** Wire shapes of key records (auth-wire §2.7, §2.12): snake_case, Unix-second timestamps. */
import type { KeyRecord } from './store.ts';

export const rootKeyView = (k: KeyRecord) => ({
  key_id: k.id,
  public_key: k.publicKey ?? '',
  auth_method: k.authMethod ?? '',
  created_at: k.createdAt,
  revoked_at: k.revokedAt,
  permissions: k.permissions,
});

/**
 * The auth spec's ClientKey exactly; with `details` (hearth's opt-in `?details=true`, which strict
 * clients never send) also when the key expires and the application it is bound to.
 */
export const clientKeyView = (k: KeyRecord & { isValid: boolean }, details = false) => ({
  client_id: k.id,
  root_key_id: k.rootKeyId ?? '',
  name: k.name ?? '',
  permissions: k.permissions,
  created_at: k.createdAt,
  revoked_at: k.revokedAt,
  ...(details ? { expires_at: k.expiresAt, application_id: k.applicationId ?? null } : {}),
  is_valid: k.isValid,
});

export const ok = <T>(data: T) => ({ data, error: null });

export const tokenBody = (pair: { access_token: string; refresh_token: string }, extra: Record<string, unknown> = {}) =>
  ok({ access_token: pair.access_token, refresh_token: pair.refresh_token, ...extra, error: null });
