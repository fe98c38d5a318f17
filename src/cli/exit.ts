/**
 * How the `hearth` command ends (issue #6 CLI): one exit code per class of failure, and the
 * node's own message on stderr — never a stack trace for a failure the user can act on.
 *
 * 0 ok · 1 node error (the node refused or failed; unreachable; timed out) · 2 usage error (bad
 * flags or arguments, a refused confirmation, a local file problem) · 3 auth failure (not logged
 * in, token expired or revoked, a permission the credentials lack).
 */
import { AuthRevokedError, HttpError, NetworkError, RpcError, TimeoutError } from '../client/index.ts';
import { HearthError } from '../errors.ts';

export const EXIT_OK = 0;
export const EXIT_NODE = 1;
export const EXIT_USAGE = 2;
export const EXIT_AUTH = 3;

/** A mistake in how the command was called: exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Not logged in, or the profile's tokens are gone: exit 3. */
export class AuthRequiredError extends Error {
  override name = 'AuthRequiredError';
}

export interface Failure {
  code: number;
  message: string;
  /** the next command to run, when there is an obvious one */
  hint?: string;
  status?: number;
}

/** Classifies an error thrown by a command. `profile` names the profile for the login hint. */
export function describeFailure(err: unknown, profile?: string): Failure {
  const login = `hearth login${profile && profile !== 'default' ? ` --profile ${profile}` : ''}`;
  if (err instanceof UsageError) return { code: EXIT_USAGE, message: err.message };
  if (err instanceof AuthRequiredError) return { code: EXIT_AUTH, message: err.message, hint: login };
  if (err instanceof AuthRevokedError) return { code: EXIT_AUTH, message: err.message, hint: login, status: err.status };
  if (err instanceof HttpError) {
    const message = nodeMessage(err);
    if (err.status === 401) return { code: EXIT_AUTH, message, hint: login, status: 401 };
    // A 403 is an auth failure when the guard refused the credentials (it says so in X-Auth-Error:
    // a missing permission, a binding); a 403 from a domain rule (a group owner may not leave) is
    // the node refusing the operation.
    if (err.status === 403 && err.authError) return { code: EXIT_AUTH, message, status: 403 };
    return { code: EXIT_NODE, message, status: err.status };
  }
  if (err instanceof NetworkError) {
    return { code: EXIT_NODE, message: err.message, hint: 'is the node running? start one with: hearth dev' };
  }
  if (err instanceof TimeoutError || err instanceof RpcError) return { code: EXIT_NODE, message: err.message };
  // Local checks reuse the node's error catalogue: a bad request is the caller's mistake.
  if (err instanceof HearthError) return { code: err.kind === 'bad_request' ? EXIT_USAGE : EXIT_NODE, message: err.message };
  if (err instanceof Error && 'code' in err && typeof (err as NodeJS.ErrnoException).syscall === 'string') {
    return { code: EXIT_USAGE, message: err.message };
  }
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  return { code: EXIT_NODE, message };
}

/** `"<status>: <the node's error text>"`; the SDK's message already carries the body's `error`. */
function nodeMessage(err: HttpError): string {
  const body = err.body as { error?: unknown } | undefined;
  return typeof body?.error === 'string' ? `${body.error} (HTTP ${err.status})` : err.message;
}
