/**
 * @module client/rpc
 *
 * `POST /jsonrpc` (admin-wire-a §7): calls a context's application method. A call the node handled
 * is HTTP 200 either way: `{result: {output}}` resolves to `output` (null for methods that return
 * nothing), `{error: {type, data}}` throws {@link RpcError} — `FunctionCallError` (the method failed:
 * trap, panic, application error, unknown method), `ContextNotFound`, `Uninitialized`,
 * `ApplicationNotInstalled`, `SerdeError`, `ParseError`, ... The older `{error: {code, message}}`
 * form is understood too. Non-2xx answers (a malformed request, a client key outside its binding)
 * throw {@link HttpError}.
 *
 * @example
 * ```ts
 * await node.rpc.execute(contextId, 'set', { key: 'k', value: 'hello' });
 * const v = await node.rpc.execute<string>(contextId, 'get', { key: 'k' }); // 'hello'
 * ```
 */

import { DecodeError, RpcError } from './errors.ts';
import type { CallOptions, HttpClient, HttpResponse } from './http.ts';

export interface ExecuteOptions extends CallOptions {
  /** Sent for older nodes; current nodes execute as their own identity and ignore it. */
  executorPublicKey?: string;
}

export class RpcApi {
  private nextId = 1;

  constructor(private readonly http: HttpClient) {}

  /** Runs `method` of the context's application with `args` (any JSON) and answers its output. */
  async execute<T = unknown>(contextId: string, method: string, args: unknown = {}, options: ExecuteOptions = {}): Promise<T> {
    const { executorPublicKey, ...call } = options;
    const params = { contextId, method, argsJson: args, ...(executorPublicKey ? { executorPublicKey } : {}) };
    return (await this.call('execute', params, call)).output as T;
  }

  /** Any JSON-RPC method the node offers (e.g. `set_ephemeral`): its `result`, or a thrown RpcError. */
  async request<T = unknown>(method: string, params: unknown, options?: CallOptions): Promise<T> {
    const response = await this.http.send('/jsonrpc', { ...options, method: 'POST', body: { jsonrpc: '2.0', id: this.nextId++, method, params } });
    const body = this.http.decode(response);
    if (!isObject(body)) throw shape(response, 'expected a JSON-RPC response object');
    if ('error' in body && body.error !== undefined && body.error !== null) throw rpcErrorOf(response, body.error);
    if (!('result' in body)) throw shape(response, 'expected "result" or "error"');
    return body.result as T;
  }

  private async call(method: string, params: unknown, options?: CallOptions): Promise<{ output: unknown }> {
    const result = await this.request<unknown>(method, params, options);
    // the reference answers {output}; a bare result is taken as the output itself (as mero-js does)
    return isObject(result) && 'output' in result ? { output: result.output ?? null } : { output: result };
  }
}

function rpcErrorOf(response: HttpResponse, error: unknown): RpcError {
  if (!isObject(error)) throw shape(response, 'error is not an object');
  if (typeof error.type === 'string') return new RpcError(error.type, error.data);
  if (typeof error.message === 'string') return new RpcError(error.message, error.data, typeof error.code === 'number' ? error.code : undefined);
  throw shape(response, 'error has neither "type" nor "message"');
}

function shape(response: HttpResponse, detail: string): DecodeError {
  return new DecodeError(response.method, response.url, response.status, response.bodyText, detail);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
