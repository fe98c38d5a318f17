/** Security headers of the auth surface's answers (auth-wire §8.2). */
import type { FastifyReply } from 'fastify';

const HEADERS: Record<string, string> = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'content-security-policy':
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; connect-src 'self' http: https:; form-action 'self'",
};

export function setSecurityHeaders(reply: FastifyReply): void {
  for (const [k, v] of Object.entries(HEADERS)) reply.header(k, v);
}
