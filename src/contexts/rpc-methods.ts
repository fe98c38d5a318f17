/**
 * The JSON-RPC methods other domains add: the extension point of `POST /jsonrpc` (admin-wire-a
 * §7). Besides `execute`, other domains contribute methods (e.g. the event stream's
 * `set_ephemeral`). The dispatcher validates the envelope and answers the reference's JSON-RPC
 * shapes; a handler only returns a result or throws a HearthError (or an RpcMethodError for a
 * typed JSON-RPC error object).
 */
import type { Principal } from '../auth/index.ts';

export interface RpcCall {
  params: unknown;
  /** who is calling (the guard's verdict on the bearer token) */
  principal: Principal;
  signal: AbortSignal;
}

export type RpcMethodHandler = (call: RpcCall) => Promise<unknown>;

/** A JSON-RPC error with the reference's `{type, data}` shape. */
export class RpcMethodError extends Error {
  constructor(
    readonly type: string,
    readonly data: unknown,
  ) {
    super(typeof data === 'string' ? data : type);
  }
}
