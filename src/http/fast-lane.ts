/**
 * Fast lanes (issue #33 "fast lane"): a route whose every call is hot (`POST /jsonrpc`) is served
 * ahead of fastify's routing and body pipeline, when the request's line and headers show that the
 * full pipeline would do nothing for it but pass it through. Everything else — and every refusal —
 * goes the full way, untouched, so each answer the node gives is still the full pipeline's:
 *
 * - a lane takes only `METHOD path` exactly (no query), a `Content-Length` body of 1 byte to
 *   `maxBody` (no chunked body: its size is unknown), of type `application/json`, with no `Origin`
 *   (browsers get their CORS headers from the full pipeline), on a connection within its quotas,
 *   while the app is not closing, and not behind a trusted proxy (the client address and host would
 *   come from X-Forwarded-*);
 * - then the gate (the node guard's synchronous path, src/auth/guard.ts) must know the sender
 *   without waiting and admit it to the route; a missing, unknown, revoked or refused token goes
 *   the full way, which answers the 401/403;
 * - the lane reads the body as bytes (`Buffer`, as the client sent them) and answers with one
 *   `res.end` of a string: status line, headers and body in one socket write.
 *
 * The answer carries the headers every answer has (`x-request-id`, `access-control-expose-headers`)
 * and is counted and logged as the full pipeline's `onResponse` does (http/app.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { HearthError } from '../errors.ts';
import { EXPOSED_HEADERS } from './cors.ts';
import { hearthAnswer } from './error-handler.ts';

/** Who sent a request, when that is known without waiting, and it may use `path`; otherwise undefined. */
export type LaneGate = (req: IncomingMessage, path: string) => unknown;

export interface LaneExchange {
  readonly requestId: string;
  readonly socket: Socket;
  /** who the gate found (the guard's principal) */
  readonly sender: unknown;
  /** the request's logger (bound to its id), made on first use */
  log(): Logger;
  /** answers `status` with a JSON text (once; later calls are ignored) */
  json(status: number, body: string): void;
  /** answers a HearthError as the full pipeline's error handler does, anything else as its 500 */
  fail(err: unknown): void;
}

export interface FastLane {
  method: 'POST';
  path: string;
  /** the largest body this lane reads; larger ones go the full way (which counts and refuses them) */
  maxBody: number;
  serve(body: Buffer, exchange: LaneExchange): void;
}

export interface FastLaneOptions {
  logger: Logger;
  requestId: () => string;
  /** a connection's refusal (over its address's quota): such requests go the full way, which answers 503 */
  refused: (socket: Socket) => boolean;
  /** a gated request's body may arrive at the minimum rate (connections.ts), as in `preParsing` */
  extendBody: (req: IncomingMessage, bytes: number) => void;
  /** what `onResponse` does for every answer: metrics, then the access log line */
  answered: (method: string, route: string, status: number, ms: number, log: () => Logger) => void;
  trustProxy: boolean;
}

const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const DIGITS = /^\d+$/;

export class FastLanes {
  private readonly lanes = new Map<string, FastLane>();
  /** set by the guard; without one no lane serves anything */
  gate: LaneGate | undefined;
  closing = false;

  constructor(private readonly o: FastLaneOptions) {}

  add(lane: FastLane): void {
    this.lanes.set(`${lane.method} ${lane.path}`, lane);
  }

  /** Serves `req` on its lane and answers true, or answers false and leaves it untouched. */
  dispatch(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.lanes.size === 0 || this.closing || this.o.trustProxy || this.gate === undefined) return false;
    const lane = this.lanes.get(`${req.method} ${req.url}`);
    if (lane === undefined) return false;
    const h = req.headers;
    const declared = h['content-length'];
    if (declared === undefined || h['transfer-encoding'] !== undefined || h.origin !== undefined || !DIGITS.test(declared)) return false;
    const length = Number(declared);
    if (length === 0 || length > lane.maxBody) return false;
    const type = h['content-type'];
    if (type === undefined || !(type === 'application/json' || JSON_TYPE.test(type))) return false;
    const socket = req.socket;
    if (this.o.refused(socket)) return false;
    let sender: unknown;
    try {
      sender = this.gate(req, lane.path);
    } catch {
      return false; // a refusal: the full pipeline answers it
    }
    if (sender === undefined) return false;
    this.o.extendBody(req, length);
    this.read(lane, req, res, sender, length);
    return true;
  }

  private read(lane: FastLane, req: IncomingMessage, res: ServerResponse, sender: unknown, length: number): void {
    const started = performance.now();
    const requestId = this.o.requestId();
    let logger: Logger | undefined;
    const log = () => (logger ??= this.o.logger.child({ reqId: requestId }));
    let done = false;
    const send = (status: number, body: string, extra?: Record<string, string>) => {
      if (done || res.headersSent || res.destroyed) return;
      done = true;
      const headers: Record<string, string | number> = {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'x-request-id': requestId,
        'access-control-expose-headers': EXPOSED_HEADERS,
        ...extra,
      };
      res.writeHead(status, headers);
      res.end(body);
      this.o.answered(lane.method, lane.path, status, performance.now() - started, log);
    };
    const exchange: LaneExchange = {
      requestId,
      socket: req.socket,
      sender,
      log,
      json: (status, body) => send(status, body),
      fail: (err) => {
        if (err instanceof HearthError) {
          const a = hearthAnswer(err, undefined);
          return send(a.status, JSON.stringify(a.body), a.headers);
        }
        log().error({ err }, 'unhandled error');
        send(500, JSON.stringify({ error: `Internal server error (request ${requestId})` }));
      },
    };
    // the body: one chunk for a small call (no copy), else gathered up to its declared length
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (first === undefined) first = chunk;
      else (chunks ??= [first]).push(chunk);
    });
    req.on('end', () => {
      // Node's parser frames the body by Content-Length; a shorter one ends as 'aborted', not here
      if (received !== length) return exchange.fail(new HearthError('bad_request', 'Request body size did not match Content-Length'));
      const body = chunks ? Buffer.concat(chunks, received) : first!;
      try {
        lane.serve(body, exchange);
      } catch (err) {
        exchange.fail(err);
      }
    });
    req.on('error', () => undefined); // a client gone mid-body: its socket closes, nothing to answer
  }
}
