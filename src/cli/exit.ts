/**
 * How the `hearth` command ends (issue #6 CLI): one exit code per class of failure, and the
 * node's own message on stderr — never a stack trace for a failure the user can act on.
 *
 * 0 ok · 1 node error (the node refused or failed; unreachable; timed out) · 2 usage error (bad
 * flags or arguments, a refused confirmation, a local file problem) · 3 auth failure (not logged
 * in, token expired or revoked, a permission the credentials lack).
 */
import { AuthRevokedError, HttpError, NetworkError, RpcError, TimeoutError } from '../client/index.ts';
import { ConfigError } from '../config/config.ts';
import { HomeExistsError } from '../config/home.ts';
import { HomeInUseError } from '../config/lock.ts';
import { errnoText } from '../errno-text.ts';
import { HearthError } from '../errors.ts';
import { AdminMissingError, CredentialsError } from '../node/credentials.ts';

export const EXIT_OK = 0;
export const EXIT_NODE = 1;
export const EXIT_USAGE = 2;
export const EXIT_AUTH = 3;

/** A mistake in how the command was called: exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The node could not start for a reason the message names (its port is taken, …): exit 1. */
export class NodeStartError extends Error {
  override name = 'NodeStartError';
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

/**
 * Classifies an error thrown by a command. `profile` names the profile for the login hint;
 * `localNode` the local node home whose node could not be reached, when one matches.
 */
export function describeFailure(err: unknown, profile?: string, localNode?: string): Failure {
  const login = `hearth login${profile && profile !== 'default' ? ` --profile ${profile}` : ''}`;
  if (err instanceof UsageError || err instanceof HomeExistsError || err instanceof CredentialsError || err instanceof ConfigError) {
    return { code: EXIT_USAGE, message: err.message };
  }
  if (err instanceof HomeInUseError) return { code: EXIT_NODE, message: err.message, hint: 'a second node needs a home of its own: add --node <name>' };
  if (err instanceof NodeStartError || err instanceof AdminMissingError) return { code: EXIT_NODE, message: err.message };
  if (err instanceof AuthRequiredError) return { code: EXIT_AUTH, message: err.message, hint: login };
  if (err instanceof AuthRevokedError) return { code: EXIT_AUTH, message: err.message, hint: login, status: err.status };
  if (err instanceof HttpError) {
    const message = nodeMessage(err);
    // a refused login needs other credentials, not another login hint
    // no token sent at all: the profile holds none (never logged in, or logged out)
    if (err.status === 401 && err.authError === 'missing_token' && !isLogin(err)) return { code: EXIT_AUTH, message: `not logged in: ${login}`, status: 401 };
    if (err.status === 401) return { code: EXIT_AUTH, message, hint: isLogin(err) ? 'check the username and password' : login, status: 401 };
    // A 403 is an auth failure when the guard refused the credentials (it says so in X-Auth-Error:
    // a missing permission, a binding); a 403 from a domain rule (a group owner may not leave) is
    // the node refusing the operation.
    if (err.status === 403 && err.authError) return { code: EXIT_AUTH, message, status: 403 };
    return { code: EXIT_NODE, message, status: err.status };
  }
  if (err instanceof NetworkError) {
    return { code: EXIT_NODE, message: unreachable(err), hint: nodeDownHint(err.url, localNode) };
  }
  if (err instanceof TimeoutError || err instanceof RpcError) return { code: EXIT_NODE, message: err.message };
  // Local checks reuse the node's error catalogue: a bad request is the caller's mistake.
  if (err instanceof HearthError) return { code: err.kind === 'bad_request' ? EXIT_USAGE : EXIT_NODE, message: err.message };
  if (err instanceof Error && 'code' in err && typeof (err as NodeJS.ErrnoException).syscall === 'string') {
    return { code: EXIT_USAGE, message: fileProblem(err as NodeJS.ErrnoException) };
  }
  // Not a failure this command knows: its message, one line (the trace only with --verbose).
  const message = err instanceof Error ? `${err.message.split('\n')[0]} (an unexpected ${err.name}; --verbose shows where)` : String(err);
  return { code: EXIT_NODE, message };
}

/**
 * What to do about a node that does not answer: start the local node that serves that address
 * (`hearth run --node <name>`), or, with no such home, a development node when the address is on
 * this machine; a remote node is not for this CLI to start.
 */
function nodeDownHint(url: string, localNode?: string): string {
  if (localNode) return `is the node running? start it with: hearth run --node ${localNode}`;
  let host = '';
  try {
    host = new URL(url).hostname;
  } catch {
    /* not a URL: treated as remote */
  }
  if (/^(127\.|localhost$|\[::1\]$)/.test(host)) return 'is the node running? start one with: hearth dev (or pass --node <url|name>)';
  return 'is the node running, and reachable from here? (or pass --node <url|name>)';
}

const isLogin = (err: HttpError) => /\/auth\/token(\?|$)/.test(err.url);

/** `cannot read /x: no such file or directory` for a failed file operation. */
export function fileProblem(err: NodeJS.ErrnoException): string {
  const verb = ['open', 'read', 'stat', 'lstat', 'scandir', 'access', 'realpath'].includes(err.syscall ?? '') ? 'read' : 'write';
  const what = err.path ? ` ${err.path}` : '';
  return `cannot ${verb}${what}: ${errnoText(err)}`;
}

/** `cannot reach http://127.0.0.1:2528 (connection refused)`. */
function unreachable(err: NetworkError): string {
  const text = err.message;
  const reason = /ECONNREFUSED/.test(text)
    ? 'connection refused'
    : /ENOTFOUND|EAI_AGAIN/.test(text)
      ? 'unknown host'
      : /ECONNRESET|socket hang up|other side closed/i.test(text)
        ? 'the connection was reset'
        : /ETIMEDOUT|EHOSTUNREACH|ENETUNREACH/.test(text)
          ? 'no route to the host'
          : text.replace(/^\S+ \S+ failed: /, '');
  let origin = err.url;
  try {
    origin = new URL(err.url).origin;
  } catch {
    /* keep the URL as it is */
  }
  return `cannot reach ${origin} (${reason})`;
}

/**
 * `"<the node's error text> (HTTP <status>)"`. The reference words a failed login
 * "Authentication failed: Authentication failed: …" (auth-wire §2.1): said once here.
 */
function nodeMessage(err: HttpError): string {
  const body = err.body as { error?: unknown } | undefined;
  const text = typeof body?.error === 'string' ? `${body.error} (HTTP ${err.status})` : err.message;
  return text.replace(/^(Authentication failed: )+/, 'Authentication failed: ');
}
