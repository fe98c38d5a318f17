/**
 * The event stream service (admin spec "Events"; admin-wire-a §8.1–§8.2; docs/events.md): SSE
 * sessions (open, resume with `Last-Event-ID`, subscribe, inspect), the subscription rules shared
 * with the WebSocket endpoint, and presence replay on subscribe. No HTTP here: `routes.ts` parses
 * and writes, this decides.
 */
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/index.ts';
import type { Clock } from '../clock.ts';
import { badRequest, forbidden, notFound } from '../errors.ts';
import { observable, parseIdSets, type IdSets, type ObserveDeps } from './access.ts';
import type { EventBus } from '../bus.ts';
import * as C from './constants.ts';
import { connectJson, gapJson, resultJson } from './frames.ts';
import { contextTopic, groupTopic } from './frames.ts';
import { EventHub, type Sink } from './hub.ts';
import type { PresenceService } from './presence.ts';
import { encodeSseFrame, frameId, parseFrameId } from './sse-format.ts';
import { SseSession, type SseLimits } from './sse-session.ts';

export interface StreamLimits extends SseLimits {
  sessionIdleMs: number;
  maxSessions: number;
}

export const DEFAULT_LIMITS: StreamLimits = {
  replayFrames: C.REPLAY_BUFFER_FRAMES,
  queueFrames: C.CONNECTION_QUEUE_FRAMES,
  heartbeatMs: C.SSE_HEARTBEAT_MS,
  closeFlushMs: C.CLOSE_FLUSH_MS,
  sessionIdleMs: C.SESSION_IDLE_MS,
  maxSessions: C.MAX_SESSIONS,
};

export interface EventStreamDeps {
  bus: EventBus;
  presence: PresenceService;
  observe: ObserveDeps;
  clock: Clock;
  /** told when the node drops a connection (slow consumer, replaced); for the log */
  onDrop?: (info: { sessionId: string; reason: string }) => void;
  limits?: Partial<StreamLimits>;
}

/** What `GET /sse` writes before the session's frames, and where it resumes. */
export interface SseOpening {
  session: SseSession;
  reconnect: boolean;
  head: string[];
  sentUpTo: number;
}

/** A live WebSocket (ws.ts), closed on stop. */
export interface Closable {
  close(reason: string): void;
}

export interface SubscriptionRequest {
  id: string;
  method: 'subscribe' | 'unsubscribe';
  params: IdSets;
}

export class EventStreamService {
  readonly hub: EventHub;
  readonly limits: StreamLimits;
  private readonly sessions = new Map<string, SseSession>();
  private readonly sockets = new Set<Closable>();
  private sweeper?: NodeJS.Timeout;
  private stopped = false;

  /** open connections by transport (the `hearth_event_streams_active` gauge) */
  activeStreams(): { sse: number; ws: number } {
    let sse = 0;
    for (const session of this.sessions.values()) if (session.connected) sse++;
    return { sse, ws: this.sockets.size };
  }

  constructor(private readonly d: EventStreamDeps) {
    this.hub = new EventHub(d.bus);
    this.limits = { ...DEFAULT_LIMITS, ...d.limits };
    if (this.limits.queueFrames >= this.limits.replayFrames) throw new RangeError('queueFrames must be below replayFrames');
  }

  start(): void {
    this.stopped = false;
    this.hub.start();
    this.sweeper ??= setInterval(() => this.sweep(), C.SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  /** Closes every stream with a close frame (before the HTTP server drains) and stops listening. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.hub.stop();
    for (const s of this.sessions.values()) s.disconnect('node shutting down');
    for (const ws of [...this.sockets]) ws.close('node shutting down');
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Opens a stream: resumes the session named by `Last-Event-ID` when it exists and belongs to
   * this key, else creates one. A resume the buffer cannot cover, and a resume of a session that
   * is gone, get an explicit gap frame after the connect frame.
   */
  openSse(principal: Principal, lastEventId: string | undefined): SseOpening {
    const wanted = parseFrameId(lastEventId);
    const existing = wanted ? this.sessions.get(wanted.sessionId) : undefined;
    if (wanted && existing && existing.owner === principal.keyId) {
      existing.principal = principal;
      const ring = existing.ring;
      const asked = Math.min(wanted.n, ring.last);
      const sentUpTo = Math.max(asked, ring.first - 1);
      const head = [encodeSseFrame({ id: frameId(existing.id, sentUpTo), retry: C.SSE_RETRY_MS, data: connectJson(existing.id, true) })];
      if (sentUpTo > asked) {
        head.push(encodeSseFrame({ data: gapJson({ lastEventId: frameId(existing.id, asked), resumedAfter: frameId(existing.id, sentUpTo), missed: sentUpTo - asked, reason: 'buffer_exceeded' }) }));
      }
      return { session: existing, reconnect: true, head, sentUpTo };
    }
    const session = this.createSession(principal);
    const head = [encodeSseFrame({ id: frameId(session.id, 0), retry: C.SSE_RETRY_MS, data: connectJson(session.id, false) })];
    if (lastEventId !== undefined && lastEventId.trim() !== '') {
      // Whatever the reason (expired, unknown, another key's), the client learns only that its
      // frames are gone: the session's existence is not disclosed.
      head.push(encodeSseFrame({ data: gapJson({ lastEventId: lastEventId.trim().slice(0, 64), resumedAfter: frameId(session.id, 0), missed: null, reason: 'session_unknown' }) }));
    }
    return { session, reconnect: false, head, sentUpTo: 0 };
  }

  /** `POST /sse/subscription` after its body has been parsed by `parseSubscriptionRequest`. */
  async subscription(principal: Principal, req: SubscriptionRequest): Promise<Record<string, unknown>> {
    const session = this.sessions.get(req.id);
    if (!session) throw notFound('Session not found. Please reconnect to SSE endpoint first.');
    if (session.owner !== principal.keyId) throw forbidden('Forbidden: not the session owner');
    if (req.method === 'unsubscribe') {
      const removed = this.unsubscribe(session, session.topics, req.params);
      // the reference's two lists, exactly (admin-wire-a §8.2): group ids go beside the context ids
      // (both are 64 hex, never equal), so nothing is lost and no undeclared key is added
      return {
        status: 'unsubscribed',
        unsubscribed: [...removed.contexts, ...removed.groups],
        requested: [...req.params.contexts, ...req.params.groups],
      };
    }
    const kept = await this.subscribe(principal, session, session.topics, req.params);
    return { status: 'subscribed', contexts: kept.contexts, groups: kept.groups };
  }

  /** `GET /sse/session/:sid`. */
  sessionInfo(principal: Principal, sessionId: string): Record<string, unknown> {
    if (!/^\d{1,20}$/.test(sessionId)) throw badRequest('Invalid Session Id');
    const session = this.sessions.get(sessionId);
    if (!session) throw notFound('Session not found');
    if (session.owner !== principal.keyId) throw forbidden('Forbidden: not the session owner');
    const contexts: string[] = [];
    const groups: string[] = [];
    for (const t of session.topics) (t.startsWith('c:') ? contexts : groups).push(t.slice(2));
    return {
      session_id: BigInt(session.id),
      // the reference's keys exactly (admin-wire-a §8.2): subscribed groups follow the contexts
      subscriptions: [...contexts, ...groups],
      event_counter: session.ring.last,
      status: session.connected ? 'active' : 'persisted',
    };
  }

  /**
   * Adds the observable part of `wanted` to a sink's topics and replays current presence of each
   * kept context to that sink only (also on a repeat subscribe, as the reference does).
   */
  async subscribe(principal: Principal, sink: Sink, topics: Set<string>, wanted: IdSets): Promise<IdSets> {
    const kept = await observable(principal, wanted, this.d.observe);
    const fresh = [...kept.contexts.map(contextTopic), ...kept.groups.map(groupTopic)].filter((t) => !topics.has(t));
    if (topics.size + fresh.length > C.MAX_SUBSCRIPTIONS) {
      throw badRequest(`A stream may subscribe to at most ${C.MAX_SUBSCRIPTIONS} contexts and groups`);
    }
    for (const t of fresh) {
      topics.add(t);
      this.hub.add(sink, t);
    }
    for (const contextId of kept.contexts) {
      for (const entry of this.d.presence.snapshot(contextId)) {
        const wire = { contextId, type: 'Ephemeral', data: { author: entry.author, state: entry.state, ageMs: entry.ageMs } };
        sink.deliver(resultJson(wire), wire);
      }
    }
    return kept;
  }

  /** Removes ids from a sink's topics; answers which of them were subscribed. */
  unsubscribe(sink: Sink, topics: Set<string>, ids: IdSets): IdSets {
    const removed: IdSets = { contexts: [], groups: [] };
    for (const id of ids.contexts) if (this.drop(sink, topics, contextTopic(id))) removed.contexts.push(id);
    for (const id of ids.groups) if (this.drop(sink, topics, groupTopic(id))) removed.groups.push(id);
    return removed;
  }

  /** Forgets every topic of a sink (a WebSocket that closed). */
  release(sink: Sink, topics: Set<string>): void {
    for (const t of topics) this.hub.remove(sink, t);
    topics.clear();
  }

  trackSocket(ws: Closable): () => void {
    this.sockets.add(ws);
    return () => this.sockets.delete(ws);
  }

  /** Forgets sessions detached for longer than the idle limit, and the oldest beyond the cap. */
  sweep(): void {
    const now = this.d.clock.now();
    const detached: SseSession[] = [];
    for (const s of this.sessions.values()) {
      if (s.detachedAt === null) continue;
      if (now - s.detachedAt >= this.limits.sessionIdleMs) this.forget(s);
      else detached.push(s);
    }
    let excess = this.sessions.size - this.limits.maxSessions;
    if (excess <= 0) return;
    detached.sort((a, b) => (a.detachedAt ?? 0) - (b.detachedAt ?? 0));
    for (const s of detached) {
      if (excess-- <= 0) break;
      this.forget(s);
    }
  }

  private drop(sink: Sink, topics: Set<string>, topic: string): boolean {
    if (!topics.delete(topic)) return false;
    this.hub.remove(sink, topic);
    return true;
  }

  private forget(s: SseSession): void {
    this.release(s, s.topics);
    this.sessions.delete(s.id);
  }

  private createSession(principal: Principal): SseSession {
    if (this.sessions.size >= this.limits.maxSessions) this.sweep();
    let id: string;
    do id = randomBytes(8).readBigUInt64BE().toString();
    while (id === '0' || this.sessions.has(id));
    const session = new SseSession(id, principal.keyId, principal, this.limits, () => this.d.clock.now(), (s, reason) =>
      this.d.onDrop?.({ sessionId: s.id, reason }),
    );
    this.sessions.set(id, session);
    return session;
  }
}

/**
 * Parses a `POST /sse/subscription` body (admin-wire-a §8.2):
 * `{id: "<session id>", method: "subscribe" | "unsubscribe", params: {contextIds?, groupIds?}}`.
 */
export function parseSubscriptionRequest(body: unknown): SubscriptionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Invalid request: the body must be a JSON object');
  const b = body as Record<string, unknown>;
  const id = typeof b.id === 'number' && Number.isSafeInteger(b.id) ? String(b.id) : b.id;
  if (typeof id !== 'string' || !/^\d{1,20}$/.test(id) || BigInt(id) > 0xffffffffffffffffn) throw badRequest('Invalid Session Id');
  if (b.method !== 'subscribe' && b.method !== 'unsubscribe') throw badRequest('Invalid request: method must be "subscribe" or "unsubscribe"');
  return { id, method: b.method, params: parseIdSets(b.params) };
}
