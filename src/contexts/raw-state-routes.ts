/**
 * hearth's raw state routes (issue #25 §4; docs/contexts.md "Raw state rows"): a context's
 * replicated state rows, paged, and one row's value. hearth-only and admin-only (the guard's table
 * declares them `admin`, auth/route-permissions.ts); read-only. Parse, call raw-state.ts, shape.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { requireId } from '../crypto/ids.ts';
import { badRequest } from '../errors.ts';
import { Errors } from '../http/response-schemas.ts';
import { parseHexKey, parseLimit, type RawStateReader } from './raw-state.ts';
import { ContextParams, RawStatePageAnswer, RawStateQuery, RawStateValueAnswer, RawStateValueQuery } from './schemas.ts';

const DOCS = {
  page: {
    summary: "hearth: a page of a context's raw state rows (key, size, preview), in key order; admin only",
    params: ContextParams,
    querystring: RawStateQuery,
    response: { 200: RawStatePageAnswer, ...Errors(400, 401, 403, 404) },
  },
  value: {
    summary: "hearth: one raw state row's value (base64, at most 1 MiB, `truncated` past it); admin only",
    params: ContextParams,
    querystring: RawStateValueQuery,
    response: { 200: RawStateValueAnswer, ...Errors(400, 401, 403, 404) },
  },
};

export function registerRawStateRoutes(root: FastifyInstance, reader: RawStateReader): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/admin-api/contexts/:contextId/raw-state', { schema: DOCS.page }, async (req) => {
    const contextId = requireId(req.params.contextId, 'context id');
    const after = parseHexKey(req.query.after, 'after');
    return { data: await reader.page(contextId, { after, limit: parseLimit(req.query.limit) }) };
  });
  app.get('/admin-api/contexts/:contextId/raw-state/value', { schema: DOCS.value }, async (req) => {
    const contextId = requireId(req.params.contextId, 'context id');
    const key = parseHexKey(req.query.key, 'key');
    if (key === undefined) throw badRequest('Invalid key: required');
    return { data: await reader.value(contextId, key) };
  });
}
