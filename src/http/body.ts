/**
 * Request-body helpers shared by route modules. Several reference routes take an optional JSON
 * body that clients send as nothing, `{}` or an empty string with a JSON content type.
 */
import type { FastifyInstance } from 'fastify';

/** Within `scope`, an empty (or blank) JSON body parses as no body instead of a 400. */
export function emptyJsonAsNoBody(scope: FastifyInstance): void {
  const json = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    return json(req, body as string, done);
  });
}
