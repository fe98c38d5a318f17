/**
 * The node's error catalogue. Services throw `HearthError` with a kind and a message safe to show
 * the caller; `http/error-handler.ts` is the one place that turns a kind into an HTTP status, body
 * and headers. Anything that is not a `HearthError` is a bug and becomes a 500 whose details stay in
 * the logs (reference README "Errors": never a 500 for a condition the caller caused).
 */

export type ErrorKind =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'bad_gateway'
  | 'not_implemented'
  | 'unavailable'
  | 'gateway_timeout'
  /** 507: the node has no room to store it (disk full, blob quota; docs/security.md "Disk") */
  | 'insufficient_storage';

/** `X-Auth-Error` reasons (auth-wire §4.6). */
export type AuthReason =
  | 'token_expired'
  | 'token_revoked'
  | 'token_reuse'
  | 'invalid_token'
  | 'missing_token'
  | 'invalid_request'
  | 'permission_denied'
  | 'invalid_node';

export interface ErrorExtra {
  authReason?: AuthReason;
  retryAfterSecs?: number;
  /** extra top-level body fields, e.g. `type: "FunctionCallError"` */
  body?: Record<string, unknown>;
}

export class HearthError extends Error {
  override name = 'HearthError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly extra: ErrorExtra = {},
  ) {
    super(message);
  }
}

export const badRequest = (m: string, extra?: ErrorExtra) => new HearthError('bad_request', m, extra);
export const unauthenticated = (m: string, authReason?: AuthReason) => new HearthError('unauthenticated', m, { authReason });
export const forbidden = (m: string, authReason?: AuthReason) => new HearthError('forbidden', m, { authReason });
export const notFound = (m: string) => new HearthError('not_found', m);
export const conflict = (m: string) => new HearthError('conflict', m);
export const rateLimited = (m: string, retryAfterSecs: number) => new HearthError('rate_limited', m, { retryAfterSecs });
export const unavailable = (m: string) => new HearthError('unavailable', m);
export const badGateway = (m: string) => new HearthError('bad_gateway', m);
/** 501: this node cannot do it at all (no TEE hardware), as the reference answers */
export const notImplemented = (m: string) => new HearthError('not_implemented', m);
