/**
 * @module client/errors
 *
 * The client's error set. Every failure a call can end in is one of these:
 *
 * - {@link HttpError}: the node answered with a non-2xx status.
 * - {@link AuthRevokedError}: a terminal auth failure (`x-auth-error: token_reuse`
 *   or `token_revoked`); the stored tokens have been cleared. Subclass of HttpError.
 * - {@link TimeoutError}: the call's deadline (`timeoutMs`) passed.
 * - {@link NetworkError}: no HTTP response (connection refused, DNS, reset, CORS).
 * - {@link DecodeError}: a 2xx answer whose body is not the expected JSON shape.
 * - {@link RpcError}: a JSON-RPC `error` object (`{type, data}`) in a 200 answer.
 *
 * A caller's own `AbortSignal` is not wrapped: aborting rejects with the signal's
 * `reason` (a `DOMException` named `AbortError` unless the caller gave another).
 */

/** Values of the `x-auth-error` response header (auth-wire §4.6). */
import type { HttpResponse } from './http-response.ts';

export type AuthErrorCode =
  | 'token_expired'
  | 'token_revoked'
  | 'token_reuse'
  | 'invalid_token'
  | 'invalid_request'
  | 'permission_denied'
  | 'missing_token'
  | 'invalid_node';

/** The `x-auth-error` values after which the session is over (auth-wire §9.4). */
export const TERMINAL_AUTH_ERRORS: ReadonlySet<string> = new Set(['token_reuse', 'token_revoked']);

export interface HttpErrorInit extends HttpResponse {
  /** The body decoded as JSON, or `undefined` when it is empty or not JSON. */
  body: unknown;
  cause?: unknown;
}

/** The node answered with a non-2xx status. */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  /** The raw response body (empty for HEAD and for guard rejections). */
  readonly bodyText: string;
  /** The body decoded as JSON, or `undefined`. */
  readonly body: unknown;
  /** The `x-auth-error` header value, or `null` when absent. */
  readonly authError: string | null;

  constructor(init: HttpErrorInit) {
    super(describe(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.method = init.method;
    this.url = init.url;
    this.status = init.status;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.bodyText = init.bodyText;
    this.body = init.body;
    this.authError = init.headers.get('x-auth-error');
  }

  /** The human-readable error text the body carries, if any (see {@link errorText}). */
  get errorText(): string | undefined {
    return errorText(this.body, this.bodyText);
  }
}

/**
 * Terminal auth failure: the token family was revoked (`token_revoked`) or a
 * consumed refresh token was replayed (`token_reuse`). The client has cleared its
 * token store and called `onAuthRevoked`; the caller must log in again.
 */
export class AuthRevokedError extends HttpError {
  override name = 'AuthRevokedError';
  /** Which terminal condition the node reported. */
  readonly reason: 'token_reuse' | 'token_revoked';

  constructor(init: HttpErrorInit) {
    super(init);
    this.reason = this.authError === 'token_reuse' ? 'token_reuse' : 'token_revoked';
  }
}

/** The call did not complete within its `timeoutMs`. */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
  constructor(
    readonly method: string,
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(`${method} ${url} timed out after ${timeoutMs} ms`);
  }
}

/** No HTTP response was received (connection refused, DNS failure, reset, CORS). */
export class NetworkError extends Error {
  override name = 'NetworkError';
  constructor(
    readonly method: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(`${method} ${url} failed: ${causeText(cause)}`, { cause });
  }
}

/** `fetch failed (connect ECONNREFUSED 127.0.0.1:2428)`: undici hides the reason in `cause`. */
function causeText(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause;
  return inner instanceof Error && inner.message ? `${cause.message} (${inner.message})` : cause.message;
}

/** A 2xx answer whose body is not the JSON shape the call expects. */
export class DecodeError extends Error {
  override name = 'DecodeError';
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly bodyText: string,
    detail: string,
    cause?: unknown,
  ) {
    super(`${method} ${url}: ${detail}`, cause === undefined ? undefined : { cause });
  }
}

/** A JSON-RPC call answered with an `error` object (admin-wire-a §7). */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    /** The error's `type`, e.g. `FunctionCallError`, `ContextNotFound`. */
    readonly type: string,
    /** The error's `data` (a string or an object, depending on `type`). */
    readonly data?: unknown,
    /** A numeric `code`, when the node sends one. */
    readonly code?: number,
  ) {
    super(rpcMessage(type, data));
  }
}

function rpcMessage(type: string, data: unknown): string {
  if (typeof data === 'string' && data !== '') return `${type}: ${data}`;
  if (data && typeof data === 'object' && typeof (data as { message?: unknown }).message === 'string') {
    return `${type}: ${(data as { message: string }).message}`;
  }
  return type;
}

/**
 * Extracts a human-readable error text from a response body, covering the node's
 * error shapes (admin-wire-a §1.4, auth-wire §1.3): `{"error":"…"}`,
 * `{"error":{"message":"…"}}`, `{"data":{"status":"…"}}` (503 health/ready), and
 * plain-text bodies.
 */
export function errorText(body: unknown, bodyText: string): string | undefined {
  if (body && typeof body === 'object') {
    const { error, data } = body as { error?: unknown; data?: unknown };
    if (typeof error === 'string' && error !== '') return error;
    if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
    if (data && typeof data === 'object' && typeof (data as { status?: unknown }).status === 'string') {
      return `status ${(data as { status: string }).status}`;
    }
    return undefined;
  }
  const text = bodyText.trim();
  if (text === '' || body !== undefined) return undefined;
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function describe(init: HttpErrorInit): string {
  let message = `${init.method} ${init.url} → HTTP ${init.status}${init.statusText ? ` ${init.statusText}` : ''}`;
  // The reference words a refused login "Authentication failed: Authentication failed: …"
  // (auth-wire §2.1); the message says it once (`errorText` keeps the node's words as they are).
  const text = errorText(init.body, init.bodyText)?.replace(/^(Authentication failed: )+/, 'Authentication failed: ');
  if (text) message += `: ${text}`;
  const auth = init.headers.get('x-auth-error');
  if (auth) message += ` [x-auth-error: ${auth}]`;
  return message;
}
