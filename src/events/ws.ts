/**
 * One `/ws` connection (admin-wire-a §8.3): client text frames
 * `{"id": <u64|null>, "method": "subscribe"|"unsubscribe"|"execute", "params": {…}}`, replies
 * `{"id": <echo>, "result": {"contextIds": […], "groupIds"?: […]}}` (groupIds omitted when empty) or
 * `{"id", "error": {"type", "data"}}`, pushes `{"id": null, "result": <event>}`. Invalid JSON is
 * ignored. The server pings every 30 s and closes with 1002 "Ping timeout" when no pong follows
 * within 10 s. A socket whose unsent bytes pass the bound is closed (1013) as a slow consumer.
 */
import type { WebSocket } from 'ws';
import type { Principal } from '../auth/index.ts';
import { RpcMethodError, type RpcMethodHandler } from '../contexts/index.ts';
import { HearthError } from '../errors.ts';
import { parseJson } from '../codec/json.ts';
import { stringifyExact } from '../http/json.ts';
import { parseIdSets } from './access.ts';
import { CLOSE_FLUSH_MS, WS_CLOSE_SLOW_CONSUMER, WS_MAX_BUFFERED_BYTES, WS_PING_INTERVAL_MS, WS_PONG_TIMEOUT_MS } from './constants.ts';
import type { Sink } from './hub.ts';
import type { EventStreamService } from './service.ts';

export interface WsDeps {
  stream: EventStreamService;
  /** JSON-RPC methods reachable through `execute` frames (the `execute` method), when wired */
  rpcMethods?: () => Record<string, RpcMethodHandler>;
  maxBufferedBytes?: number;
  onDrop?: (reason: string) => void;
}

type RequestId = string | number | bigint | null;

export class WsConnection implements Sink {
  readonly topics = new Set<string>();
  private closed = false;
  private pingTimer?: NodeJS.Timeout;
  private pongTimer?: NodeJS.Timeout;
  private readonly abort = new AbortController();
  private readonly untrack: () => void;

  constructor(
    private readonly socket: WebSocket,
    readonly principal: Principal,
    private readonly d: WsDeps,
  ) {
    this.untrack = d.stream.trackSocket(this);
    socket.on('message', (data, isBinary) => {
      if (!isBinary) void this.onMessage(data.toString());
    });
    socket.on('pong', () => clearTimeout(this.pongTimer));
    socket.on('close', () => this.cleanup());
    socket.on('error', () => this.cleanup());
    this.pingTimer = setInterval(() => this.ping(), WS_PING_INTERVAL_MS);
    this.pingTimer.unref();
  }

  deliver(json: string): void {
    if (this.closed) return;
    if (this.socket.bufferedAmount > (this.d.maxBufferedBytes ?? WS_MAX_BUFFERED_BYTES)) {
      this.d.onDrop?.('slow consumer');
      this.shut(WS_CLOSE_SLOW_CONSUMER, 'slow consumer: too many undelivered events');
      return;
    }
    // `{"id":null,"result":…}` built from the shared `{"result":…}` JSON without re-serialising it.
    this.socket.send(`{"id":null,${json.slice(1)}`);
  }

  /** Closes from the node side (shutdown). */
  close(reason: string): void {
    this.shut(1001, reason);
  }

  private async onMessage(text: string): Promise<void> {
    let msg: unknown;
    try {
      // u64-exact (an id above 2^53 is echoed as sent) and depth-bounded (issue #17 findings 6, 7)
      msg = parseJson(text);
    } catch {
      return; // the reference ignores frames that are not JSON
    }
    const m = (typeof msg === 'object' && msg !== null && !Array.isArray(msg) ? msg : {}) as Record<string, unknown>;
    const id = requestId(m.id);
    try {
      const result = await this.handle(m.method, m.params);
      this.reply({ id, result });
    } catch (err) {
      this.reply({ id, error: errorObject(err) });
    }
  }

  private async handle(method: unknown, params: unknown): Promise<unknown> {
    switch (method) {
      case 'subscribe': {
        const kept = await this.d.stream.subscribe(this.principal, this, this.topics, parseIdSets(params));
        return idsResult(kept.contexts, kept.groups);
      }
      case 'unsubscribe': {
        const removed = this.d.stream.unsubscribe(this, this.topics, parseIdSets(params));
        return idsResult(removed.contexts, removed.groups);
      }
      case 'execute': {
        const handler = this.d.rpcMethods?.().execute;
        if (!handler) throw new RpcMethodError('ParseError', 'method "execute" is not available on this node');
        return handler({ params, principal: this.principal, signal: this.abort.signal });
      }
      default:
        throw new RpcMethodError('ParseError', `unknown method ${JSON.stringify(String(method))}: expected subscribe, unsubscribe or execute`);
    }
  }

  private reply(body: { id: RequestId; result?: unknown; error?: unknown }): void {
    if (this.closed) return;
    this.socket.send(stringifyExact(body));
  }

  private ping(): void {
    if (this.closed) return;
    this.socket.ping();
    clearTimeout(this.pongTimer);
    this.pongTimer = setTimeout(() => this.shut(1002, 'Ping timeout'), WS_PONG_TIMEOUT_MS);
    this.pongTimer.unref();
  }

  /** Starts the close handshake; a peer that does not complete it in time is cut off. */
  private shut(code: number, reason: string): void {
    if (this.closed) return;
    this.cleanup();
    this.socket.close(code, reason.slice(0, 120));
    const killer = setTimeout(() => this.socket.terminate(), CLOSE_FLUSH_MS);
    killer.unref();
    this.socket.once('close', () => clearTimeout(killer));
  }

  private cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.pongTimer);
    this.abort.abort();
    this.d.stream.release(this, this.topics);
    this.untrack();
  }
}

function idsResult(contexts: string[], groups: string[]): Record<string, string[]> {
  return groups.length > 0 ? { contextIds: contexts, groupIds: groups } : { contextIds: contexts };
}

function requestId(v: unknown): RequestId {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint') return v;
  return null;
}

/**
 * The reference's `{type, data}` error objects; a refusal for a bound key is `Unauthorized`. Faults
 * of the caller's frame (bad params, too large, unknown id) are `ParseError`, as the reference names
 * a request it could not use; a node that is busy, past a deadline or in conflict did not fail to
 * parse anything, so those are `InternalError` with the reason (the caller may retry).
 */
export function errorObject(err: unknown): { type: string; data?: unknown } {
  if (err instanceof RpcMethodError) return err.data === undefined ? { type: err.type } : { type: err.type, data: err.data };
  if (err instanceof HearthError) {
    switch (err.kind) {
      case 'forbidden':
      case 'unauthenticated':
        return { type: 'Unauthorized', data: err.message };
      case 'bad_request':
      case 'payload_too_large':
      case 'unsupported_media_type':
      case 'not_found':
        return { type: 'ParseError', data: err.message };
      default:
        return { type: 'InternalError', data: err.message };
    }
  }
  return { type: 'InternalError', data: {} };
}
