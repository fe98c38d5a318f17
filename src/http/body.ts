/**
 * Request-body parsing shared by the app and route modules. Every JSON body passes the depth bound
 * (issue #17 finding 6: no recursion on attacker-controlled depth) before it is parsed; the size
 * bound is the route's `bodyLimit`, checked against `Content-Length` before any byte is read
 * (`refuseOversizedBodies`). Several reference routes take an optional JSON body that clients send
 * as nothing, `{}` or an empty string with a JSON content type.
 */
import type { FastifyInstance } from 'fastify';
import { jsonTooDeep, MAX_JSON_DEPTH, parseJson } from '../codec/json.ts';
import { badRequest, HearthError } from '../errors.ts';

/** The depth refusal every JSON parser of the node answers (400 naming the limit). */
export function depthError(): HearthError {
  return badRequest(`Invalid JSON: nested deeper than ${MAX_JSON_DEPTH} levels (the limit)`);
}

/**
 * Replaces the scope's JSON parser with fastify's own (prototype-poisoning checks included) behind
 * the depth bound. The app installs it once; scopes that replace the parser use the helpers below,
 * which apply the same bound.
 */
export function boundedJsonBodies(scope: FastifyInstance): void {
  const json = scope.getDefaultJsonParser('error', 'error');
  if (scope.hasContentTypeParser('application/json')) scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (jsonTooDeep(body as string)) return done(depthError(), undefined);
    return json(req, body as string, done);
  });
}

/** Within `scope`, an empty (or blank) JSON body parses as no body instead of a 400. */
export function emptyJsonAsNoBody(scope: FastifyInstance): void {
  const json = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    if (jsonTooDeep(body as string)) return done(depthError(), undefined);
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
    if (jsonTooDeep(text)) return done(depthError(), undefined);
    try {
      done(null, parseJson(text));
    } catch (err) {
      done(badRequest(`Invalid JSON: ${(err as Error).message}`), undefined);
    }
  });
}
