/**
 * @module client/ws
 *
 * The event stream over WebSocket (`/ws`, admin-wire-a §8.3): subscribe / unsubscribe requests
 * answered by id, event pushes `{id: null, result}`. Browser-safe: the WebSocket class is injected
 * and defaults to `globalThis.WebSocket` (Node 20 has none: pass the `ws` package's class). The
 * token travels as `?token=` because a browser WebSocket cannot send headers. On a drop it
 * reconnects with backoff (1 s doubling to 30 s) and re-subscribes. WebSocket frames are not
 * resumable; use {@link EventStream} (SSE) when no frame may be missed.
 */
import type { HttpClient } from './http.ts';
import type { StreamFrame, SubscriptionIds } from './events.ts';

/** The part of the standard WebSocket API used here. */
/**
 * A handler property the SDK assigns. Declared through a method so its parameter is checked
 * bivariantly: the `ws` package's class (handlers of its own `Event` types) and the browser's
 * `WebSocket` both fit, while the SDK's own handlers still see the fields they read.
 */
type Handler<E> = { bivariance(ev: E): void }['bivariance'] | null;

export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: Handler<unknown>;
  onmessage: Handler<{ data: unknown }>;
  onclose: Handler<{ code: number; reason: string }>;
  onerror: Handler<unknown>;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface EventSocketOptions {
  WebSocket?: WebSocketConstructor;
  /** deadline for a subscribe/unsubscribe answer; default 10 000 ms */
  requestTimeoutMs?: number;
  /** first reconnect delay, doubled up to `maxReconnectDelayMs`; default 1000 */
  reconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
}

export interface SocketEvents {
  open: undefined;
  frame: StreamFrame;
  /** the socket closed; a reconnect follows unless `close()` was called */
  close: { code: number; reason: string };
  error: unknown;
}

const OPEN = 1;

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  timer: ReturnType<typeof setTimeout>;
}

/** A refused request (`{"error": {"type", "data"}}`). */
export class SocketRequestError extends Error {
  constructor(
    readonly type: string,
    readonly data: unknown,
  ) {
    super(typeof data === 'string' ? `${type}: ${data}` : type);
    this.name = 'SocketRequestError';
  }
}

/**
 * @example
 * ```ts
 * import WebSocket from 'ws'; // Node 20; omit in browsers
 * const socket = new EventSocket(client.http, { WebSocket });
 * socket.on('frame', (f) => console.log(f.type));
 * await socket.connect();
 * await socket.subscribe({ contextIds: [contextId] });
 * ```
 */
export class EventSocket {
  private readonly Ctor: WebSocketConstructor;
  private readonly listeners = new Map<keyof SocketEvents, Set<(v: never) => void>>();
  private readonly pending = new Map<number, Pending>();
  private readonly contexts = new Set<string>();
  private readonly groups = new Set<string>();
  private socket?: WebSocketLike;
  private nextId = 1;
  private closedByUser = false;
  private delay: number;
  private reconnectTimer?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly http: HttpClient,
    private readonly options: EventSocketOptions = {},
  ) {
    const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!Ctor) throw new TypeError('no WebSocket implementation available; pass options.WebSocket');
    this.Ctor = Ctor;
    this.delay = options.reconnectDelayMs ?? 1000;
  }

  on<K extends keyof SocketEvents>(event: K, fn: (v: SocketEvents[K]) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn as (v: never) => void);
    return () => set.delete(fn as (v: never) => void);
  }

  /** Opens the socket; resolves once it is open (and re-subscribed), rejects if it cannot open. */
  async connect(): Promise<void> {
    this.closedByUser = false;
    const tokens = await this.http.getTokens();
    const url = new URL(`${this.http.baseUrl}/ws`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    if (tokens?.accessToken) url.searchParams.set('token', tokens.accessToken);
    const socket = new this.Ctor(url.href);
    this.socket = socket;
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = (e) => reject(e instanceof Error ? e : new Error('WebSocket failed to open'));
      socket.onclose = (e) => reject(new Error(`WebSocket closed before opening (${e.code} ${e.reason})`));
    });
    this.delay = this.options.reconnectDelayMs ?? 1000;
    socket.onmessage = (e) => this.onMessage(e.data);
    socket.onerror = (e) => this.emit('error', e);
    socket.onclose = (e) => this.onClose(socket, e);
    this.emit('open', undefined);
    if (this.contexts.size > 0 || this.groups.size > 0) {
      await this.request('subscribe', { contextIds: [...this.contexts], groupIds: [...this.groups] });
    }
  }

  async subscribe(ids: SubscriptionIds): Promise<{ contextIds: string[]; groupIds?: string[] }> {
    for (const id of ids.contextIds ?? []) this.contexts.add(id);
    for (const id of ids.groupIds ?? []) this.groups.add(id);
    return (await this.request('subscribe', ids)) as { contextIds: string[]; groupIds?: string[] };
  }

  async unsubscribe(ids: SubscriptionIds): Promise<{ contextIds: string[]; groupIds?: string[] }> {
    for (const id of ids.contextIds ?? []) this.contexts.delete(id);
    for (const id of ids.groupIds ?? []) this.groups.delete(id);
    return (await this.request('unsubscribe', ids)) as { contextIds: string[]; groupIds?: string[] };
  }

  close(): void {
    this.closedByUser = true;
    clearTimeout(this.reconnectTimer);
    this.socket?.close(1000, 'client closed');
    this.failPending(new Error('socket closed'));
  }

  private request(method: string, ids: SubscriptionIds): Promise<unknown> {
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN) return Promise.reject(new Error('the socket is not open'));
    const id = this.nextId++;
    const params: SubscriptionIds = { contextIds: ids.contextIds ?? [] };
    if (ids.groupIds && ids.groupIds.length > 0) params.groupIds = ids.groupIds;
    return new Promise((resolve, reject) => {
      const timeoutMs = this.options.requestTimeoutMs ?? 10_000;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      socket.send(JSON.stringify({ id, method, params }));
    });
  }

  private onMessage(data: unknown): void {
    let msg: { id?: unknown; result?: unknown; error?: { type?: string; data?: unknown } };
    try {
      msg = JSON.parse(typeof data === 'string' ? data : String(data));
    } catch {
      return;
    }
    if (msg.id === null || msg.id === undefined) {
      const r = msg.result as Record<string, unknown> | undefined;
      if (r && typeof r.type === 'string' && ('contextId' in r || 'groupId' in r)) this.emit('frame', r as unknown as StreamFrame);
      return;
    }
    const p = this.pending.get(Number(msg.id));
    if (!p) return;
    this.pending.delete(Number(msg.id));
    clearTimeout(p.timer);
    if (msg.error) p.reject(new SocketRequestError(String(msg.error.type ?? 'Error'), msg.error.data));
    else p.resolve(msg.result);
  }

  private onClose(socket: WebSocketLike, e: { code: number; reason: string }): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    this.failPending(new Error(`socket closed (${e.code} ${e.reason})`));
    this.emit('close', { code: e.code, reason: e.reason });
    if (this.closedByUser) return;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.options.maxReconnectDelayMs ?? 30_000);
    this.reconnectTimer = setTimeout(() => {
      this.connect().catch((err) => {
        this.emit('error', err);
        if (!this.closedByUser) this.onClose(this.socket ?? socket, { code: 1006, reason: 'reconnect failed' });
      });
    }, wait);
  }

  private failPending(err: Error): void {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }

  private emit<K extends keyof SocketEvents>(event: K, value: SocketEvents[K]): void {
    for (const fn of this.listeners.get(event) ?? []) {
      try {
        (fn as (v: SocketEvents[K]) => void)(value);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
}
