/** Small readers of request facts shared by the guards. */
import type { FastifyRequest } from 'fastify';

/** Where a request comes from, for token host binding (auth-wire §4.5) and login throttling. */
export interface RequestOrigin {
  /** the host the request names (Host, or X-Forwarded-Host behind a trusted proxy) */
  host: string | undefined;
  /** the client address (the socket's, or X-Forwarded-For behind a trusted proxy) */
  address?: string;
}

/** The bearer token of the Authorization header; undefined when absent or not a bearer. */
export function bearerOf(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h || !h.startsWith('Bearer ')) return undefined;
  return h.slice(7).trim() || undefined;
}

/** The `token` query parameter (auth spec: accepted on /ws, /sse and /sse/*). */
export function queryTokenOf(request: FastifyRequest): string | undefined {
  const q = request.url.indexOf('?');
  if (q === -1) return undefined;
  return new URLSearchParams(request.url.slice(q + 1)).get('token') || undefined;
}

/**
 * The host a token's `node_url` is compared with (auth-wire §4.5). `X-Forwarded-Host` counts only
 * when the node is configured to trust a proxy (`server.trust_proxy`, fastify's `trustProxy`):
 * otherwise any client could name any host with it.
 */
export function hostOf(request: FastifyRequest): string | undefined {
  return request.host || undefined;
}

/** The request facts auth decisions read: host (see {@link hostOf}) and client address. */
export function originOf(request: FastifyRequest): RequestOrigin {
  return { host: hostOf(request), address: request.ip };
}

export function pathOf(request: FastifyRequest): string {
  const q = request.url.indexOf('?');
  return q === -1 ? request.url : request.url.slice(0, q);
}
