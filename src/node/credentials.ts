/**
 * Where the admin account's credentials come from: flags first, then the reference node's
 * environment variables (MERO_AUTH_ADMIN_USER, MERO_AUTH_ADMIN_PASSWORD or
 * MERO_AUTH_ADMIN_PASSWORD_FILE), so existing tooling works unchanged (auth-wire §3.3).
 */
import { readFileSync } from 'node:fs';
import { passwordProblem } from '../auth/passwords.ts';
import { errnoText } from '../errno-text.ts';

/** The admin account a node creates when it has none (`NodeOptions.admin`). */
export interface AdminCredentials {
  username: string;
  password: string;
}

export class CredentialsError extends Error {
  override name = 'CredentialsError';
}

export function adminCredentials(
  flags: { adminUser?: string; adminPassword?: string },
  env: NodeJS.ProcessEnv = process.env,
): AdminCredentials | undefined {
  // an empty variable counts as unset (shells and compose files often export empty values)
  const set = (v: string | undefined) => (v === '' ? undefined : v);
  const username = flags.adminUser ?? set(env.MERO_AUTH_ADMIN_USER);
  let password = flags.adminPassword;
  const file = set(env.MERO_AUTH_ADMIN_PASSWORD_FILE);
  if (password === undefined && file) {
    try {
      password = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new CredentialsError(`cannot read MERO_AUTH_ADMIN_PASSWORD_FILE ${file}: ${errnoText(err)}`);
    }
  }
  password ??= set(env.MERO_AUTH_ADMIN_PASSWORD);
  if (username === undefined && password === undefined) return undefined;
  if (!username) throw new CredentialsError('An admin password was given without a user: set MERO_AUTH_ADMIN_USER or --admin-user.');
  if (password === undefined) {
    throw new CredentialsError('An admin user was given without a password: set MERO_AUTH_ADMIN_PASSWORD or --admin-password.');
  }
  const problem = passwordProblem(password);
  if (problem) throw new CredentialsError(`Admin password rejected: ${problem} (8-128 characters).`);
  return { username, password };
}

/** The node refuses to start without an admin account (and says which env vars or flags to set). */
export class AdminMissingError extends Error {
  override name = 'AdminMissingError';
}
