/** Error kind → HTTP status: the single table (style rule 4). */
import type { ErrorKind } from '../errors.ts';

export const STATUS_OF: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  not_implemented: 501,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
  insufficient_storage: 507,
};
