/**
 * @module client/http-response
 *
 * A fully read HTTP response: a file of its own because both the transport's types
 * (./http-types.ts) and the errors that carry a response (./errors.ts) use it, and neither imports
 * the other for it (issue #35: no import closes a circle).
 */
/** A fully read response. */
export interface HttpResponse {
  method: string;
  url: string;
  status: number;
  statusText: string;
  headers: Headers;
  bodyText: string;
}
