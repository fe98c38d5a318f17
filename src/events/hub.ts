/**
 * The fan-out between the node's `EventBus` and stream consumers (SSE sessions, WebSocket
 * connections): an index from subscription topic (`c:<context>` / `g:<group>`) to sinks, so one
 * event costs one JSON serialisation plus one cheap hand-off per interested sink. A sink never
 * blocks the hub: each one queues into its own bounded buffer (see sse-session.ts, ws.ts).
 */
import type { Principal } from '../auth/index.ts';
import type { EventBus, NodeEvent } from '../bus.ts';
import { mayReceiveAdminFrames } from './access.ts';
import { ADMIN_ONLY_GROUP_KINDS, resultJson, toWireEvent, topicOf, type WireEvent } from './frames.ts';

export interface Sink {
  /** whose rights decide admin-only frames */
  readonly principal: Principal;
  /** hands over one frame's `{"result": …}` JSON; must not block or throw */
  deliver(json: string, event: WireEvent): void;
}

export class EventHub {
  private readonly topics = new Map<string, Set<Sink>>();
  private unsubscribe?: () => void;

  constructor(private readonly bus: EventBus) {}

  start(): void {
    this.unsubscribe ??= this.bus.subscribe((e) => this.dispatch(e));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  add(sink: Sink, topic: string): void {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    set.add(sink);
  }

  remove(sink: Sink, topic: string): void {
    const set = this.topics.get(topic);
    if (!set) return;
    set.delete(sink);
    if (set.size === 0) this.topics.delete(topic);
  }

  /** How many sinks listen on a topic (observability and tests). */
  listeners(topic: string): number {
    return this.topics.get(topic)?.size ?? 0;
  }

  private dispatch(event: NodeEvent): void {
    const wire = toWireEvent(event);
    if (!wire) return;
    const sinks = this.topics.get(topicOf(wire));
    if (!sinks || sinks.size === 0) return;
    const json = resultJson(wire);
    const adminOnly = 'groupId' in wire && ADMIN_ONLY_GROUP_KINDS.has(wire.type);
    for (const sink of [...sinks]) {
      if (adminOnly && !mayReceiveAdminFrames(sink.principal, (wire as { groupId: string }).groupId)) continue;
      sink.deliver(json, wire);
    }
  }
}
