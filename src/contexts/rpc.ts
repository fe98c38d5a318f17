/**
 * `POST /jsonrpc` (admin-wire-a §7): the JSON-RPC 2.0 envelope and its dispatch. `execute` is the
 * contexts domain's; other domains contribute methods through `methods` (rpc-methods.ts), e.g. the
 * event stream's `set_ephemeral`.
 *
 * Answers, as the reference:
 * - a handled call, successful or not, is HTTP 200 `{jsonrpc:"2.0", id, result}` or
 *   `{jsonrpc:"2.0", id, error:{type, data?}}` (RpcMethodError);
 * - a body that is not a JSON-RPC 2.0 request, or names an unknown method, is a 400 `{"error"}`;
 * - a HearthError from a handler keeps its HTTP status (a bound client key outside its binding is
 *   a 403 with `X-Auth-Error`, auth spec);
 * - anything else is a bug: logged, and answered `{type:"InternalError", data:{}}` with no detail.
 *
 * `sync_status` is also this domain's (a node without peers reports `idle` / `waitingForPeers`).
 *
 * The body is parsed here with the u64-exact JSON reader, so large integers in `argsJson` reach the
 * guest unchanged, and may be as large as the reference allows (`argsJson` ≤ 10 MiB).
 *
 * Two ways in, one call (`call` below): the fast lane (http/fast-lane.ts, issue #33) takes an
 * authenticated call under LARGE_BODY_BYTES ahead of fastify's pipeline and parses its bytes here;
 * the fastify route takes every other request (and answers every refusal) as before.
 */
import { setMaxListeners, type EventEmitter } from 'node:events';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Principal } from '../auth/index.ts';
import { JsonDepthError, parseJson } from '../codec/json.ts';
import { depthError, exactJsonBodies } from '../http/body.ts';
import { stringifyExact } from '../http/json.ts';
import { badRequest, HearthError, unauthenticated } from '../errors.ts';
import { countLargeBodies, LARGE_BODY_BYTES, type BodyAdmission } from './body-admission.ts';
import type { ContextCalls } from './calls.ts';
import { Errors } from '../http/response-schemas.ts';
import { RpcMethodError, type RpcMethodHandler } from './rpc-methods.ts';
import { JsonRpcAnswer, JsonRpcRequest } from './schemas.ts';
import { MAX_ARGS_BYTES } from './types.ts';

export interface JsonRpcDeps {
  calls: ContextCalls;
  /** methods other domains contribute (`set_ephemeral`, ...); `execute` and `sync_status` cannot be replaced */
  methods?: Record<string, RpcMethodHandler>;
  /** told how each call ended (metrics: ok, app_error, rpc_error, invalid) */
  onOutcome?: (outcome: 'ok' | 'app_error' | 'rpc_error' | 'invalid') => void;
  /** the pending-call bounds: a body is counted toward them before it is read (issue #23 §4) */
  admission?: BodyAdmission;
}

/** Room for a maximal `argsJson` plus the envelope. */
const RPC_BODY_LIMIT = MAX_ARGS_BYTES + 64 * 1024;

type RpcId = string | number | bigint | null;

interface Envelope {
  id: RpcId;
  method: string;
  params: unknown;
}

function parseEnvelope(body: unknown, known: ReadonlySet<string>): Envelope {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Invalid JSON-RPC request: expected an object');
  const b = body as Record<string, unknown>;
  if (b.jsonrpc !== '2.0') throw badRequest('Invalid JSON-RPC request: jsonrpc must be "2.0"');
  if (!('id' in b)) throw badRequest('Invalid JSON-RPC request: id is required');
  const id = b.id;
  if (id !== null && typeof id !== 'string' && typeof id !== 'number' && typeof id !== 'bigint') {
    throw badRequest('Invalid JSON-RPC request: id must be a string, a number or null');
  }
  if (typeof b.method !== 'string') throw badRequest('Invalid JSON-RPC request: method must be a string');
  if (!known.has(b.method)) throw badRequest(`Unknown JSON-RPC method '${b.method}': expected one of ${[...known].join(', ')}`);
  return { id, method: b.method, params: b.params };
}

const connectionAborts = new WeakMap<object, AbortController>();

/**
 * An AbortSignal that fires when the caller goes away before the answer is written: its
 * connection closes (an HTTP/1.1 client cannot drop one request and keep the connection). One per
 * connection rather than per request (issue #14): a keep-alive client's calls share it, and once
 * it fired, later requests cannot arrive on that connection.
 */
function disconnectSignal(socket: EventEmitter): AbortSignal {
  let ac = connectionAborts.get(socket);
  if (!ac) {
    const made = new AbortController();
    setMaxListeners(0, made.signal); // pipelined requests each listen while their call runs
    connectionAborts.set(socket, made);
    socket.once('close', () => made.abort(new Error('client disconnected')));
    ac = made;
  }
  return ac.signal;
}

interface CallContext {
  principal: Principal | undefined;
  socket: EventEmitter;
  log: () => Pick<Logger, 'error'>;
}

type Answer = { jsonrpc: '2.0'; id: RpcId; result: unknown } | { jsonrpc: '2.0'; id: RpcId; error: { type: string; data: unknown } };

export function registerJsonRpcRoute(root: FastifyInstance, deps: JsonRpcDeps): void {
  const methods: Record<string, RpcMethodHandler> = {
    ...deps.methods,
    execute: (call) => deps.calls.execute(call.params, call.principal, call.signal),
    sync_status: (call) => deps.calls.syncStatus(call.params, call.principal),
  };
  const known = new Set(Object.keys(methods));
  const outcome = deps.onOutcome ?? (() => undefined);

  /** One call, from its parsed body to its answer; a HearthError is an HTTP error answer (both lanes). */
  async function call(body: unknown, c: CallContext): Promise<Answer> {
    let envelope: Envelope;
    try {
      envelope = parseEnvelope(body, known);
    } catch (err) {
      outcome('invalid');
      throw err;
    }
    const { id, method, params } = envelope;
    const principal = c.principal;
    if (!principal) throw unauthenticated('Missing bearer token: send Authorization: Bearer <access token>', 'missing_token');
    try {
      const result = await methods[method]({ params, principal, signal: disconnectSignal(c.socket) });
      outcome('ok');
      return { jsonrpc: '2.0', id, result };
    } catch (err) {
      if (err instanceof RpcMethodError) {
        outcome(err.type === 'FunctionCallError' ? 'app_error' : err.type === 'ParseError' ? 'invalid' : 'rpc_error');
        return { jsonrpc: '2.0', id, error: { type: err.type, data: err.data } };
      }
      outcome(err instanceof HearthError ? 'invalid' : 'rpc_error');
      if (err instanceof HearthError) throw err;
      c.log().error({ err, method }, 'JSON-RPC method failed');
      return { jsonrpc: '2.0', id, error: { type: 'InternalError', data: {} } };
    }
  }

  // The fast lane (http/fast-lane.ts): an authenticated call of up to LARGE_BODY_BYTES, read as
  // bytes and parsed here once, as exactJsonBodies parses it on the full pipeline (same 400s).
  root.fastLanes?.add({
    method: 'POST',
    path: '/jsonrpc',
    maxBody: LARGE_BODY_BYTES - 1,
    serve: (bytes, ex) => {
      const text = bytes.toString('utf8');
      let body: unknown;
      try {
        // parseJson bounds the depth first (one pass): too deep is the full pipeline's depth answer
        body = parseJson(text);
      } catch (err) {
        return ex.fail(err instanceof JsonDepthError ? depthError() : badRequest(`Invalid JSON: ${(err as Error).message}`));
      }
      call(body, { principal: ex.sender as Principal, socket: ex.socket, log: ex.log }).then(
        (answer) => ex.json(200, stringifyExact(answer)),
        (err: unknown) => ex.fail(err),
      );
    },
  });

  root.register(async (scoped) => {
    exactJsonBodies(scoped, { bodyLimit: RPC_BODY_LIMIT });
    // a large body counts toward the node's pending bytes before it is read: past the bound, 503 at once
    if (deps.admission) scoped.addHook('onRequest', countLargeBodies(deps.admission));

    const docs = {
      config: { docs: { body: JsonRpcRequest } },
      schema: { summary: 'JSON-RPC 2.0: execute an application method (and other methods)', response: { 200: JsonRpcAnswer, ...Errors(400, 401, 403) } },
    };
    scoped.post('/jsonrpc', { bodyLimit: RPC_BODY_LIMIT, ...docs }, (req, reply) =>
      call(req.body, { principal: req.principal, socket: reply.raw.socket ?? reply.raw, log: () => req.log }),
    );
  });
}
