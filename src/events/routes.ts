/**
 * HTTP routes of the live event stream (admin spec "Events"; admin-wire-a §8): `GET /sse`,
 * `POST /sse/subscription`, `GET /sse/session/:sid` and the `/ws` WebSocket. Thin: parse, call
 * `EventStreamService`, write. The node guard has already authenticated the token (bearer header
 * or `?token=`) and set `request.principal`; the per-id rules live in `access.ts`.
 */
import { PassThrough } from 'node:stream';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/index.ts';
import { EXPOSED_HEADERS } from '../http/cors.ts';
import { ErrorBody, Errors } from '../http/response-schemas.ts';
import { unauthenticated } from '../errors.ts';
import { WS_MAX_MESSAGE_BYTES } from './constants.ts';
import { EventStreamService, parseSubscriptionRequest } from './service.ts';
import { WsConnection, type WsDeps } from './ws.ts';
import type { PresenceIntentService } from './presence-intents.ts';
import { registerPresenceIntentRoute } from './presence-intents-route.ts';
import { EventStreamAnswer, SessionAnswer, SessionParams, SubscriptionAnswer, SubscriptionRequest, WebSocketUpgrade } from './schemas.ts';

export interface EventRoutesDeps {
  stream: EventStreamService;
  /** JSON-RPC methods for `execute` frames on `/ws` */
  rpcMethods?: WsDeps['rpcMethods'];
  /** relayed account presence (`POST /admin-api/contexts/{id}/presence-intents`); unregistered without it */
  presenceIntents?: PresenceIntentService;
}

/** Route documentation (issue #6 OpenAPI). Bodies are parsed by hand: documented (config.docs), not validated. */
const DOCS = {
  sse: { summary: 'Open (or resume with Last-Event-ID) the live event stream', response: { 200: EventStreamAnswer, ...Errors(401, 403) } },
  subscription: { summary: 'Subscribe or unsubscribe an SSE session', response: { 200: SubscriptionAnswer, ...Errors(400, 401, 403, 404) } },
  session: { summary: 'What an SSE session is subscribed to', params: SessionParams, response: { 200: SessionAnswer, ...Errors(400, 401, 403, 404) } },
  ws: {
    summary: 'The live event stream over a WebSocket (?token= or bearer header)',
    response: { 101: WebSocketUpgrade, 426: ErrorBody, ...Errors(401, 403) },
  },
};

function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw unauthenticated('Missing bearer token: send Authorization: Bearer <access token>', 'missing_token');
  return req.principal;
}

export function registerEventRoutes(app: FastifyInstance, deps: EventRoutesDeps): void {
  const { stream } = deps;
  // Streams are closed (with a close frame) before the server waits for connections to drain.
  app.addHook('preClose', (done) => {
    stream.stop();
    done();
  });

  app.get('/sse', { schema: DOCS.sse }, async (req, reply) => {
    const principal = principalOf(req);
    const header = req.headers['last-event-id'];
    const opening = stream.openSse(principal, Array.isArray(header) ? header[0] : header);
    // A PassThrough (not a hijacked socket) so the reply still runs the CORS hook; its
    // `writableNeedDrain` carries the socket's back-pressure to the session.
    const body = new PassThrough({ highWaterMark: 16 * 1024 });
    opening.session.attach(body, opening.head, opening.sentUpTo, reply.raw);
    req.log.debug({ session: opening.session.id, reconnect: opening.reconnect }, 'sse stream opened');
    return reply
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache')
      .header('x-accel-buffering', 'no')
      // A stream ends only when it is closed: its socket is never reused for another request.
      .header('connection', 'close')
      .header('x-sse-session-id', opening.session.id)
      .header('x-sse-reconnect', String(opening.reconnect))
      .header('access-control-expose-headers', `${EXPOSED_HEADERS}, x-sse-session-id, x-sse-reconnect`)
      .send(body);
  });

  if (deps.presenceIntents) registerPresenceIntentRoute(app, deps.presenceIntents);

  app.post('/sse/subscription', { config: { docs: { body: SubscriptionRequest } }, schema: DOCS.subscription }, async (req) => {
    const principal = principalOf(req);
    const request = parseSubscriptionRequest(req.body);
    return { result: await stream.subscription(principal, request) };
  });

  app.get<{ Params: { sid: string } }>('/sse/session/:sid', { schema: DOCS.session }, async (req) => {
    return { result: stream.sessionInfo(principalOf(req), req.params.sid) };
  });

  app.register(async (scoped) => {
    await scoped.register(websocket, { options: { maxPayload: WS_MAX_MESSAGE_BYTES } });
    // A refused upgrade (401, 403, 404) is answered over the raw socket, which no HTTP machinery
    // owns afterwards: close it, or a client that keeps it open would hold the node's shutdown.
    scoped.addHook('onResponse', async (req, reply) => {
      if (reply.statusCode >= 400 && req.headers.upgrade?.toLowerCase() === 'websocket') req.raw.socket.destroy();
    });
    scoped.route({
      method: 'GET',
      url: '/ws',
      schema: DOCS.ws,
      // A plain GET (no upgrade) is told what the route is (the reference answers 400/426).
      handler: async (_req, reply) =>
        reply.code(426).header('upgrade', 'websocket').send({ error: 'Upgrade required: /ws is a WebSocket endpoint' }),
      wsHandler: (socket, req) => {
        const principal = req.principal;
        if (!principal || stream.isStopped) {
          socket.close(1011, 'not available');
          return;
        }
        new WsConnection(socket, principal, {
          stream,
          rpcMethods: deps.rpcMethods,
          onDrop: (reason) => req.log.info({ reason }, 'websocket dropped'),
        });
      },
    });
  });
}
