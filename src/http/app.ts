/**
 * The HTTP application factory: builds the fastify app without listening (style rule 1), so tests
 * run it in-process with `inject` or over a real socket. The route table lives in `routes.ts`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { BODY_LIMIT_BYTES, SERVER_DEFAULTS } from '../config/defaults.ts';
import { HearthError } from '../errors.ts';
import { boundedJsonBodies } from './body.ts';
import { registerCors } from './cors.ts';
import { errorBody, formatValidation, handleError } from './error-handler.ts';
import { stringifyExact } from './json.ts';
import { lazyValidators } from './lazy-validators.ts';
import { ConnectionGovernor, REFUSAL_GRACE_MS, REFUSAL_RETRY_AFTER_SECS, resolveConnectionPolicy } from './connections.ts';
import { enforceHeaderDeadline, type ConnectionLimits } from './limits.ts';
import { FastLanes } from './fast-lane.ts';
import { closeAfterAnswer } from './linger.ts';
import { loggablePath } from './logging.ts';
import { lazyChildLogger } from './request-logger.ts';
import { UNMATCHED_ROUTE, type Metrics } from './metrics.ts';
import { RouteCatalogue } from './openapi.ts';

export type App = FastifyInstance;

export interface AppOptions {
  logger: Logger;
  corsAllowedOrigins?: string[];
  /** read client address, host and scheme from X-Forwarded-* (only behind a proxy the operator runs) */
  trustProxy?: boolean;
  /** connection cap and timeouts (limits.ts); `maxConnections` 0 leaves the server uncapped */
  connections?: ConnectionLimits;
  /** request counts and latencies for `GET /metrics` */
  metrics?: Metrics;
  /**
   * one info line per answered request (`server.access_log`); otherwise they log at debug (issue
   * #14: a log line per request was a large part of a request's cost)
   */
  accessLog?: boolean;
  /**
   * mounts every route; called once, after the cross-cutting hooks are in place. Hot routes may
   * also add a fast lane (`app.fastLanes`, fast-lane.ts).
   */
  routes: (app: App, catalogue: RouteCatalogue) => void | Promise<void>;
}

/** Probe routes log at debug so orchestrators polling them do not flood the log (product.md A12). */
const QUIET = new Set(['/admin-api/health', '/admin-api/ready', '/auth/health']);

/**
 * Request ids: unique within the process's life and across restarts (a random prefix per process,
 * then a counter), without the cost of a random UUID per request.
 */
export function requestIds(): () => string {
  const prefix = randomBytes(6).toString('base64url');
  let n = 0;
  return () => `${prefix}-${(++n).toString(36)}`;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** routes served ahead of fastify's pipeline (fast-lane.ts); the guard sets its gate */
    fastLanes: FastLanes;
  }
}

export async function buildApp(opts: AppOptions): Promise<App> {
  const limits = opts.connections ?? { ...SERVER_DEFAULTS };
  const nextId = requestIds();
  const app = Fastify({
    trustProxy: opts.trustProxy ?? false,
    keepAliveTimeout: limits.keepAliveTimeoutSecs * 1000,
    requestTimeout: limits.requestTimeoutSecs * 1000,
    // Node's slow-headers timeout; enforceHeaderDeadline (below) covers the connections it misses
    http: { headersTimeout: limits.headerTimeoutSecs * 1000, connectionsCheckingInterval: 1000 },
    loggerInstance: opts.logger,
    // fastify's own request lines would log raw URLs (with ?token=); ours log route templates
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: nextId,
    childLoggerFactory: lazyChildLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    schemaErrorFormatter: (errors: unknown, dataVar: string) => formatValidation(errors as never, dataVar),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    schemaController: { compilersFactory: { buildValidator: lazyValidators() } },
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: 'idle',
  } as Parameters<typeof Fastify>[0]) as unknown as App;
  // the server's only request listener so far: fastify made the server with it
  const fastifyListener = app.server.listeners('request')[0] as RequestListener | undefined;
  if (limits.maxConnections > 0) app.server.maxConnections = limits.maxConnections;
  const governor = new ConnectionGovernor(resolveConnectionPolicy(limits.maxConnections, { ...SERVER_DEFAULTS, ...definedOnly(limits) }), opts.logger);
  governor.attach(app.server);
  for (const series of governor.metrics()) opts.metrics?.addGauge(series);
  enforceHeaderDeadline(app.server, limits.headerTimeoutSecs * 1000, () => governor.countHeaderDeadline());

  // Hooks on every request are callback-style (no promise per hook and request: issue #14).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const refused = governor.refusal(request.raw.socket);
    if (refused === undefined) return done();
    // a connection over its address's quota (or the reserve) that sent a request: told so, then closed
    governor.answered(request.raw.socket);
    closeAfterAnswer(reply.raw, REFUSAL_GRACE_MS);
    reply.header('retry-after', String(REFUSAL_RETRY_AFTER_SECS));
    const style = request.routeOptions?.config?.errorStyle;
    const why =
      refused === 'per_address'
        ? `Too many connections from this address (at most ${governor.policy.perAddress}); close some or retry later`
        : refused === 'per_group'
          ? `Too many connections from this address's network (/24 or /64: at most ${governor.policy.perGroup}); retry later`
          : 'The node is near its connection limit and keeps its last connections for clients holding few; retry later';
    reply.code(503).send(errorBody(style, why));
  });
  refuseOversizedBodies(app);
  boundedJsonBodies(app);
  // After the guards (onRequest): a request that presented a valid token may send its body at the
  // minimum rate; every other body has the short deadline set when its headers came in.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (request.principal !== undefined && governor.awaitsBody(request.raw)) {
      const limit = request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES;
      const declared = Number(request.headers['content-length'] ?? limit);
      governor.extendBody(request.raw, Math.min(limit, Number.isFinite(declared) ? declared : limit));
    }
    done(null, payload);
  });
  const accessLevel = opts.accessLog ? 'info' : 'debug';
  /** every answer, from either pipeline: counted, then logged (at debug unless the access log is on) */
  const answered = (method: string, template: string | undefined, url: string, status: number, ms: number, log: () => Pick<Logger, 'info' | 'debug'>) => {
    opts.metrics?.request(method, template ?? UNMATCHED_ROUTE, status, ms / 1000);
    // probes that succeed log at debug whatever the access-log choice (5xx causes log on their own)
    const route = template ?? loggablePath(url);
    const level = QUIET.has(route) && status < 400 ? 'debug' : accessLevel;
    if (opts.logger.isLevelEnabled(level)) log()[level]({ method, route, status, ms: Math.round(ms) }, 'request');
  };
  app.addHook('onResponse', (request, reply, done) => {
    answered(request.method, request.routeOptions?.url, request.url, reply.statusCode, reply.elapsedTime, () => request.log);
    done();
  });
  const lanes = new FastLanes({
    logger: opts.logger,
    requestId: nextId,
    trustProxy: opts.trustProxy ?? false,
    refused: (socket) => governor.refusal(socket) !== undefined,
    extendBody: (req, bytes) => {
      if (governor.awaitsBody(req)) governor.extendBody(req, bytes);
    },
    answered: (method, route, status, ms, log) => answered(method, route, route, status, ms, log),
  });
  app.decorate('fastLanes', lanes);
  app.addHook('preClose', (done) => {
    lanes.closing = true; // requests from now on go the full way, which answers 503 while closing
    done();
  });

  registerCors(app, opts.corsAllowedOrigins ?? []);
  // routes without a response schema serialise here: u64 values (BigInt) stay exact
  app.setReplySerializer((payload) => stringifyExact(payload));
  // Response schemas document the wire (OpenAPI, conformance tests); replies still serialise exactly.
  app.setSerializerCompiler(() => (payload) => stringifyExact(payload));
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `No route ${request.method} ${loggablePath(request.url)}` });
  });
  const catalogue = new RouteCatalogue();
  catalogue.attach(app);
  await opts.routes(app, catalogue);
  // The lanes answer in place of fastify's own request listener, which gets every request they
  // leave; the other listeners (the connection governor's, the header deadline's) still see every
  // request, in their order.
  const listeners = app.server.listeners('request') as RequestListener[];
  if (fastifyListener !== undefined && listeners.includes(fastifyListener)) {
    app.server.removeAllListeners('request');
    for (const l of listeners) {
      app.server.on('request', l !== fastifyListener ? l : (req: IncomingMessage, res: ServerResponse) => lanes.dispatch(req, res) || fastifyListener(req, res));
    }
  }
  return app;
}

/** The fields of `o` that are set (a partial config must not blank the defaults). */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * A body announced larger than the route accepts is refused with 413 before any byte of it is read,
 * and the connection is closed (issue #17 finding 7): otherwise a client could make the node read a
 * 2 GiB body that no parser will accept, or hold a streaming route open for it.
 */
function refuseOversizedBodies(app: App): void {
  app.addHook('onRequest', (request, reply, done) => {
    const declared = request.headers['content-length'];
    if (declared === undefined) return done();
    const limit = request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES;
    const length = Number(declared);
    if (!/^\d+$/.test(declared) || !Number.isSafeInteger(length)) {
      reply.header('connection', 'close');
      return done(new HearthError('bad_request', 'Invalid Content-Length header'));
    }
    if (length > limit) {
      closeAfterAnswer(reply.raw);
      return done(new HearthError('payload_too_large', `Request body of ${length} bytes exceeds this route's limit of ${limit} bytes`));
    }
    done();
  });
}
