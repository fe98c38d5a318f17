/**
 * @module client/events
 *
 * The live event stream over Server-Sent Events (admin spec "Events"; docs/events.md). Browser-safe:
 * the stream is read with `fetch` streaming, so it can send the bearer header (an `EventSource`
 * cannot), and decoded by a small SSE parser.
 *
 * {@link EventStream} behaves like the official SDK's SSE client — on every `connect` frame it
 * re-subscribes to the remembered ids, and about 3 s after a drop it reconnects — and adds what the
 * reference lacks: it resumes with `Last-Event-ID`, so frames sent while it was away are replayed
 * in order and without duplicates, and it reports a `gap` when the node could not keep them all.
 */
import type { CallOptions, HttpClient } from './http.ts';
import type { U64 } from '../codec/json.ts';

// ---- frame types ----------------------------------------------------------

export interface StateMutationData {
  newRoot: string;
  events: { kind: string; data: number[]; handler: string | null }[];
}
export interface SyncStatusData {
  syncState: { state: 'idle' | 'waitingForPeers' | 'syncing' | 'receivingSnapshot' | 'backingOff' | string; [k: string]: unknown };
  failureCount?: number;
  lastError?: string;
}
/** Live: `author` + `state`; expiry: `author` + `removed`; replay seed on subscribe: `author` + `state` + `ageMs`. */
export interface EphemeralData {
  author: string;
  state?: number[];
  removed?: true;
  ageMs?: number;
}
export interface MembershipData {
  memberAccount: string;
  role?: 'Admin' | 'Member' | 'ReadOnly' | 'ReadOnlyTee' | 'RelayTee' | string;
}

/** Data of the frames the SDK does not model field by field (as the reference shapes them). */
export type FrameData = Record<string, unknown>;

/**
 * The frames a node sends, one variant per `type` (docs/events.md; the set is closed: other bus
 * events are never sent), so `f.type === 'StateMutation'` narrows `f.data` to
 * {@link StateMutationData}. There is deliberately no catch-all variant with `type: string`: one
 * would widen every narrowed `data` back to a union (issue #25 §5).
 */
export type ContextFrame =
  | { contextId: string; type: 'StateMutation'; data: StateMutationData }
  | { contextId: string; type: 'SyncStatus'; data: SyncStatusData }
  | { contextId: string; type: 'Ephemeral'; data: EphemeralData }
  | { contextId: string; type: 'AppVersionChanged' | 'XCall'; data: FrameData };
export type GroupFrame =
  | { groupId: string; type: 'MemberJoined' | 'MemberAdded' | 'MemberRemoved'; data: MembershipData }
  | { groupId: string; type: 'MigrationStarted' | 'MigrationProgress' | 'MigrationCompleted' | 'CascadeProgress'; data: FrameData };
/** Every `type` a frame may have. */
export type FrameType = StreamFrame['type'];
export type StreamFrame = ContextFrame | GroupFrame;

export interface SubscriptionIds {
  contextIds?: string[];
  groupIds?: string[];
}

/** `GET /sse/session/{id}`: what a session is subscribed to (admin-wire-a §8.2; snake_case as sent). */
export interface SseSessionInfo {
  session_id: U64;
  /** subscribed context ids, then subscribed group ids */
  subscriptions: string[];
  /** the number of the session's last frame */
  event_counter: number;
  /** `active` while a stream is attached, `persisted` while it may still be resumed */
  status: 'active' | 'persisted';
}

/** The node could not replay everything after `lastEventId` (docs/events.md "Gap frame"). */
export interface GapInfo {
  reason: 'buffer_exceeded' | 'session_unknown' | string;
  lastEventId: string;
  resumedAfter: string;
  /** frames lost, when the node knows */
  missed: number | null;
}

export interface StreamEvents {
  /** a stream opened; `reconnect` is true when the node resumed the previous session */
  connect: { sessionId: string; reconnect: boolean };
  frame: StreamFrame;
  gap: GapInfo;
  /** the node ended the stream and said why (e.g. a slow-consumer drop, shutdown) */
  close: { reason: string };
  /** the connection ended; a reconnect follows unless the stream was stopped */
  disconnect: { error?: unknown };
  /** a failure that does not end the stream (a refused subscription, a failed connect) */
  error: unknown;
}

type Listener<T> = (value: T) => void;

/** UTF-8 bytes (as sent in `data` arrays) to text; `json` parses that text. */
export function decodeBytes(bytes: number[]): string {
  return new TextDecoder().decode(Uint8Array.from(bytes));
}
export function decodeJsonBytes<T = unknown>(bytes: number[]): T {
  return JSON.parse(decodeBytes(bytes)) as T;
}

// ---- SSE decoding -------------------------------------------------------

export interface SseMessage {
  id?: string;
  data: string;
}

/** Incremental SSE decoder (WHATWG rules that matter here: `id`, `data`, comments, blank line dispatch). */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private id?: string;

  /** Feeds text; returns the messages it completed. */
  push(text: string): SseMessage[] {
    this.buffer += text;
    const out: SseMessage[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = this.buffer.slice(0, nl);
      const width = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // A lone `\r` at the end may be the first half of `\r\n`: wait for more.
      if (width === 1 && this.buffer[nl] === '\r' && nl === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(nl + width);
      if (line === '') {
        if (this.data.length > 0) out.push({ ...(this.id !== undefined ? { id: this.id } : {}), data: this.data.join('\n') });
        this.data = [];
        this.id = undefined;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') this.data.push(value);
      else if (field === 'id' && !value.includes('\0')) this.id = value;
    }
    return out;
  }
}

// ---- the client ---------------------------------------------------------

export interface EventStreamOptions {
  /** delay before reconnecting after a drop; default 3000 (spec "Event reconnect delay") */
  reconnectDelayMs?: number;
  /** a stream silent this long is treated as dead (the node sends a heartbeat every 15 s); default 45 000 */
  idleTimeoutMs?: number;
  /** resume from a frame id saved earlier (e.g. across page loads) */
  lastEventId?: string;
  /** stops the stream for good when aborted */
  signal?: AbortSignal;
}

/**
 * @example
 * ```ts
 * const stream = new EventStream(client.http);
 * stream.on('frame', (f) => {
 *   if ('contextId' in f && f.type === 'StateMutation') console.log(f.contextId, f.data.newRoot);
 * });
 * stream.on('gap', (g) => refetchState(g));
 * await stream.subscribe({ contextIds: [contextId], groupIds: [groupId] });
 * stream.start();
 * // later
 * stream.stop();
 * ```
 */
export class EventStream {
  private readonly listeners = new Map<keyof StreamEvents, Set<Listener<never>>>();
  private readonly contexts = new Set<string>();
  private readonly groups = new Set<string>();
  private readonly reconnectDelayMs: number;
  private readonly idleTimeoutMs: number;
  private readonly stopper = new AbortController();
  private running = false;
  private session?: string;
  private lastId?: string;
  /** ids (un)subscribed while no session was open: a resumed session has not heard of them */
  private readonly awayAdded: SubscriptionIds = { contextIds: [], groupIds: [] };
  private readonly awayRemoved: SubscriptionIds = { contextIds: [], groupIds: [] };

  constructor(
    private readonly http: HttpClient,
    options: EventStreamOptions = {},
  ) {
    this.reconnectDelayMs = options.reconnectDelayMs ?? 3000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
    this.lastId = options.lastEventId;
    options.signal?.addEventListener('abort', () => this.stop(), { once: true });
  }

  /** The current session id (from the last connect frame), if connected. */
  get sessionId(): string | undefined {
    return this.session;
  }

  /** The id of the last frame received: what a reconnect resumes after. */
  get lastEventId(): string | undefined {
    return this.lastId;
  }

  on<K extends keyof StreamEvents>(event: K, fn: Listener<StreamEvents[K]>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn as Listener<never>);
    return () => set.delete(fn as Listener<never>);
  }

  /**
   * Remembers ids and, when a session is open, subscribes them now (otherwise on the next connect).
   * Resolves with what the node kept; a refusal rejects (and is also emitted as `error`).
   */
  async subscribe(ids: SubscriptionIds): Promise<{ contexts: string[]; groups: string[] } | undefined> {
    for (const id of ids.contextIds ?? []) this.contexts.add(id);
    for (const id of ids.groupIds ?? []) this.groups.add(id);
    if (!this.session) {
      this.awayAdded.contextIds!.push(...(ids.contextIds ?? []));
      this.awayAdded.groupIds!.push(...(ids.groupIds ?? []));
      return undefined;
    }
    return this.post('subscribe', ids);
  }

  async unsubscribe(ids: SubscriptionIds): Promise<void> {
    for (const id of ids.contextIds ?? []) this.contexts.delete(id);
    for (const id of ids.groupIds ?? []) this.groups.delete(id);
    if (this.session) {
      await this.post('unsubscribe', ids);
    } else {
      this.awayRemoved.contextIds!.push(...(ids.contextIds ?? []));
      this.awayRemoved.groupIds!.push(...(ids.groupIds ?? []));
    }
  }

  /**
   * `GET /sse/session/{id}` for the open session (or `sessionId`, e.g. one saved earlier): what the
   * node holds for it. Rejects when no session is known; 404 once it expired, 403 for another key's.
   */
  async sessionInfo(sessionId = this.session, options?: CallOptions): Promise<SseSessionInfo> {
    if (sessionId === undefined) throw new Error('no SSE session: start the stream and wait for its connect frame');
    return (await this.http.json<{ result: SseSessionInfo }>(`/sse/session/${encodeURIComponent(sessionId)}`, options)).result;
  }

  /** Starts reading (and reconnecting) in the background. */
  start(): void {
    if (this.running || this.stopper.signal.aborted) return;
    this.running = true;
    void this.loop();
  }

  stop(): void {
    this.stopper.abort();
    this.session = undefined;
  }

  private emit<K extends keyof StreamEvents>(event: K, value: StreamEvents[K]): void {
    for (const fn of this.listeners.get(event) ?? []) {
      try {
        (fn as Listener<StreamEvents[K]>)(value);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }

  private async loop(): Promise<void> {
    const stop = this.stopper.signal;
    while (!stop.aborted) {
      let error: unknown;
      try {
        await this.readOnce();
      } catch (err) {
        error = err;
        if (!stop.aborted) this.emit('error', err);
      }
      this.session = undefined;
      if (stop.aborted) break;
      this.emit('disconnect', error === undefined ? {} : { error });
      await sleep(this.reconnectDelayMs, stop);
    }
    this.running = false;
  }

  private async readOnce(): Promise<void> {
    const conn = new AbortController();
    const onStop = () => conn.abort();
    this.stopper.signal.addEventListener('abort', onStop, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const armIdle = () => {
      if (idle !== undefined) clearTimeout(idle);
      idle = setTimeout(() => conn.abort(new Error(`no data for ${this.idleTimeoutMs} ms`)), this.idleTimeoutMs);
    };
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (this.lastId) headers['last-event-id'] = this.lastId;
      const res = await this.http.stream('/sse', { headers, signal: conn.signal });
      if (!res.body) throw new Error('the event stream has no body');
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const parser = new SseParser();
      armIdle();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        armIdle();
        for (const msg of parser.push(decoder.decode(value, { stream: true }))) this.handle(msg);
      }
    } finally {
      if (idle !== undefined) clearTimeout(idle);
      this.stopper.signal.removeEventListener('abort', onStop);
      conn.abort();
    }
  }

  private handle(msg: SseMessage): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(msg.data) as Record<string, unknown>;
    } catch {
      return;
    }
    if (msg.id !== undefined) this.lastId = msg.id;
    if (body.type === 'connect' && typeof body.session_id === 'string') {
      this.session = body.session_id;
      this.emit('connect', { sessionId: body.session_id, reconnect: body.reconnect === true });
      // A resumed session kept its subscriptions and needs only what changed while away; a new
      // session needs them all again.
      const added = body.reconnect === true ? takeAll(this.awayAdded) : { contextIds: [...this.contexts], groupIds: [...this.groups] };
      const removed = takeAll(this.awayRemoved);
      if (body.reconnect !== true) takeAll(this.awayAdded);
      if (removed.contextIds!.length + removed.groupIds!.length > 0) this.post('unsubscribe', removed).catch(() => undefined);
      if (added.contextIds!.length + added.groupIds!.length > 0) this.post('subscribe', added).catch(() => undefined);
      return;
    }
    if (body.type === 'gap') {
      this.emit('gap', body as unknown as GapInfo);
      return;
    }
    if (body.type === 'close') {
      this.emit('close', { reason: String(body.reason ?? '') });
      return;
    }
    const result = body.result as Record<string, unknown> | undefined;
    if (result && typeof result === 'object' && typeof result.type === 'string' && ('contextId' in result || 'groupId' in result)) {
      this.emit('frame', result as unknown as StreamFrame);
    }
  }

  private async post(method: 'subscribe' | 'unsubscribe', ids: SubscriptionIds): Promise<{ contexts: string[]; groups: string[] }> {
    const params: SubscriptionIds = { contextIds: ids.contextIds ?? [] };
    // Only when non-empty, as the reference clients send it (spec "Events" rule 6).
    if (ids.groupIds && ids.groupIds.length > 0) params.groupIds = ids.groupIds;
    try {
      const body = await this.http.json<{ result: { contexts?: string[]; groups?: string[] } }>('/sse/subscription', {
        method: 'POST',
        body: { id: this.session, method, params },
      });
      return { contexts: body.result?.contexts ?? [], groups: body.result?.groups ?? [] };
    } catch (err) {
      this.emit('error', err);
      throw err;
    }
  }
}

function takeAll(ids: SubscriptionIds): SubscriptionIds {
  const out = { contextIds: ids.contextIds!.splice(0), groupIds: ids.groupIds!.splice(0) };
  return out;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
