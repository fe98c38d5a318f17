/**
 * Request-body helpers shared by route modules. Several reference routes take an optional JSON
 * body that clients send as nothing, `{}` or an empty string with a JSON content type.
 */
import type { FastifyInstance } from 'fastify';
import { parseJson } from '../client/json.ts';
import { badRequest } from '../errors.ts';

/** Within `scope`, an empty (or blank) JSON body parses as no body instead of a 400. */
export function emptyJsonAsNoBody(scope: FastifyInstance): void {
  const json = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    return json(req, body as string, done);
  });
}

/**
 * Within `scope`, JSON bodies parse with u64 integers exact (bigint past 2^53, reference README
 * "64-bit numbers"), never through a double; a malformed body is a 400 naming the problem.
 */
export function exactJsonBodies(scope: FastifyInstance, opts: { bodyLimit?: number; emptyAsNoBody?: boolean } = {}): void {
  if (scope.hasContentTypeParser('application/json')) scope.removeContentTypeParser('application/json');
  const parse = { parseAs: 'string' as const, ...(opts.bodyLimit ? { bodyLimit: opts.bodyLimit } : {}) };
  scope.addContentTypeParser('application/json', parse, (_req, body, done) => {
    const text = body as unknown as string;
    if (opts.emptyAsNoBody && text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJson(text));
    } catch (err) {
      done(badRequest(`Invalid JSON: ${(err as Error).message}`), undefined);
    }
  });
}
