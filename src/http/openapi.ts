/**
 * The OpenAPI document (issue #6): `GET /admin-api/openapi.json` is generated from the same route
 * schemas fastify validates requests with, collected as routes are registered, so the document
 * cannot drift from the server. Response schemas document the wire shapes (and the conformance tests
 * check live answers against them); they do not drive serialisation — `app.ts` keeps the exact
 * u64 serializer for every reply (docs/openapi.md). Success schemas are published closed: an
 * object carries the keys it lists and no other.
 */
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { VERSION } from '../version.ts';

export interface RouteRecord {
  method: string;
  /** fastify's route template, e.g. `/admin-api/contexts/:context_id` */
  url: string;
  schema?: FastifySchema & { summary?: string; description?: string; tags?: string[] };
  /**
   * A request body documented but not validated by fastify: `config: { docs: { body } }`, for
   * handlers that parse their body themselves (exact u64 numbers, raw streams, lenient forms).
   */
  docBody?: unknown;
}

/** Route `config` key for documentation-only parts (see {@link RouteRecord.docBody}). */
export interface RouteDocs {
  docs?: { body?: unknown };
}

type Json = Record<string, unknown>;

/** Every route the app registers, in registration order. HEAD twins of GET routes and CORS preflights are left out. */
export class RouteCatalogue {
  readonly routes: RouteRecord[] = [];
  /**
   * Whether a route (method, fastify url template) needs a bearer token, so `security` shows which
   * routes are public on this node. The composition root sets it from the node guard's route table
   * (auth/route-permissions.ts `needsToken`); until then every route is documented as guarded.
   */
  needsToken: (method: string, url: string) => boolean = () => true;

  /** Must run before any route is registered (fastify only reports routes added after the hook). */
  attach(app: FastifyInstance): void {
    // fastify registers a GET route's HEAD twin right after it, with the same handler; an explicit
    // HEAD route (e.g. blob info) has its own handler and is an operation of its own.
    const getHandlers = new Map<string, unknown>();
    app.addHook('onRoute', (route: RouteOptions) => {
      // `schema.hide`: a route that is no part of the API (the dashboard and the `/` redirect to it)
      if ((route.schema as { hide?: boolean } | undefined)?.hide) return;
      for (const method of [route.method].flat()) {
        if (method === 'GET') getHandlers.set(route.url, route.handler);
        if (method === 'OPTIONS' || (method === 'HEAD' && getHandlers.get(route.url) === route.handler)) continue;
        const docBody = (route.config as RouteDocs | undefined)?.docs?.body;
        this.routes.push({ method, url: route.url, schema: route.schema as RouteRecord['schema'], docBody });
      }
    });
  }

  document(): Json {
    const paths: Record<string, Json> = {};
    for (const route of this.routes) {
      const path = openApiPath(route.url);
      paths[path] ??= {};
      paths[path][route.method.toLowerCase()] = operation(route, this.needsToken);
    }
    return {
      openapi: '3.1.0',
      info: {
        title: 'hearth node API',
        version: VERSION,
        description: 'Admin API, auth API, JSON-RPC and event streams of a hearth node (a drop-in for the Calimero node).',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
      paths,
    };
  }
}

/** `/a/:id/b` → `/a/{id}/b`; a trailing `*` becomes the `{wildcard}` parameter. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{wildcard}');
}

function operation(route: RouteRecord, needsToken: RouteCatalogue['needsToken']): Json {
  const schema = route.schema ?? {};
  const op: Json = {
    operationId: `${route.method.toLowerCase()}${route.url.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    tags: schema.tags ?? [tagOf(route.url)],
  };
  if (schema.summary) op.summary = schema.summary;
  if (schema.description) op.description = schema.description;
  const parameters = [
    ...parametersOf(schema.params as Json | undefined, 'path'),
    ...parametersOf(schema.querystring as Json | undefined, 'query'),
  ];
  if (parameters.length > 0) op.parameters = parameters;
  const body = schema.body ?? route.docBody;
  if (body) op.requestBody = requestBodyOf(body as Json);
  op.responses = responsesOf(schema.response as Record<string, Json> | undefined);
  if (needsToken(route.method, route.url)) op.security = [{ bearer: [] }];
  return op;
}

function tagOf(url: string): string {
  const segs = url.split('/').filter(Boolean);
  if (segs[0] === 'admin-api' && segs[1]) return segs[1].startsWith(':') ? 'admin-api' : segs[1];
  return segs[0] ?? 'root';
}

function parametersOf(object: Json | undefined, where: 'path' | 'query'): Json[] {
  const props = (object?.properties ?? {}) as Record<string, Json>;
  const required = new Set((object?.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, schema]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema,
    ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
  }));
}

/** fastify accepts either a schema or `{content: {type: {schema}}}`; both are passed through. */
function requestBodyOf(body: Json): Json {
  if (isContentMap(body)) return { required: true, content: body.content };
  return { required: true, content: { 'application/json': { schema: body } } };
}

function responsesOf(response: Record<string, Json> | undefined): Json {
  const out: Json = {};
  for (const [status, entry] of Object.entries(response ?? {})) {
    const description = typeof entry.description === 'string' ? entry.description : defaultDescription(status);
    out[status] = isContentMap(entry)
      ? { description, content: entry.content, ...(entry.headers ? { headers: entry.headers } : {}) }
      : { description, content: { 'application/json': { schema: status.startsWith('2') ? closed(entry) : entry } } };
  }
  return out;
}

/**
 * A success schema with every object closed (`additionalProperties: false`) unless it says
 * otherwise (a map, or an object declared open): the answer carries the keys listed and no other,
 * which strict clients rely on (issue 21 §2) and the conformance tests check on every live answer.
 * Copies: route schemas are shared objects.
 */
function closed(schema: unknown): any {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'properties' || k === 'patternProperties' ? mapValues(v as Json, closed) : closed(v);
  // an object that lists no keys (`Type.Object({})`, e.g. an ABI document) promises none: left open
  const open = out.additionalProperties !== undefined || out.patternProperties !== undefined || Object.keys((out.properties ?? {}) as Json).length === 0;
  if (out.properties !== undefined && !open) out.additionalProperties = false;
  return out;
}

const mapValues = (o: Json, f: (v: unknown) => unknown): Json => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

function isContentMap(value: Json): value is Json & { content: Json } {
  return typeof value.content === 'object' && value.content !== null && value.type === undefined;
}

function defaultDescription(status: string): string {
  if (status.startsWith('2')) return 'Success';
  if (status === 'default') return 'Error';
  return `HTTP ${status}`;
}

/** Registers the document route; the document is built once, after every route is known. */
export function registerOpenApiRoute(app: FastifyInstance, catalogue: RouteCatalogue): void {
  let cached: Json | undefined;
  app.get(
    '/admin-api/openapi.json',
    {
      schema: {
        summary: 'This OpenAPI document',
        response: { 200: { type: 'object', required: ['openapi', 'info', 'paths'], additionalProperties: true } },
      },
    },
    async () => (cached ??= catalogue.document()),
  );
}
