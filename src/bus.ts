/**
 * The node's internal event bus: domains publish what happened (governance ops, state mutations,
 * presence), the event stream (SSE/WebSocket) and auto-follow subscribe. Synchronous fan-out;
 * a failing listener is isolated so one bad consumer cannot break a publisher. A base module
 * (imports nothing): the domains that publish stand below the event stream that listens.
 */
export type NodeEvent =
  | { type: 'group'; namespaceId: string; groupId: string; kind: string; data: Record<string, unknown> }
  | { type: 'context'; contextId: string; kind: string; data: Record<string, unknown> };

export type Listener = (event: NodeEvent) => void;

export class EventBus {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => undefined) {}

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(event: NodeEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
