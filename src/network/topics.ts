/**
 * The gossip handlers of one node, per topic, and their delivery (network-port.ts `subscribe`,
 * `GossipHandler`): shared by the libp2p and in-memory networks so both count a received message
 * and a throwing handler alike.
 */
import type { GossipAdmission, GossipHandler, GossipMessage, PeerKey } from './network-port.ts';
import type { NetworkCounters } from './counters.ts';
import { channelOfTopic } from './payload.ts';

export class TopicHandlers {
  private readonly topics = new Map<string, Set<GossipHandler>>();
  /** per topic, the admission checks its handlers gave (a topic without any admits every publisher) */
  private readonly admissions = new Map<string, Set<GossipAdmission>>();

  constructor(
    private readonly counters: NetworkCounters,
    /** told of each handler failure (for a debug log) */
    private readonly dropped: (msg: GossipMessage, err: unknown) => void = () => undefined,
  ) {}

  /**
   * Adds a handler; `joined` runs when the topic gets its first handler, `left` when the returned
   * function removes its last.
   */
  add(topic: string, handler: GossipHandler, hooks: { joined?: () => void; left?: () => void } = {}, admit?: GossipAdmission): () => void {
    let set = this.topics.get(topic);
    if (!set) {
      this.topics.set(topic, (set = new Set()));
      hooks.joined?.();
    }
    set.add(handler);
    if (admit) {
      let admits = this.admissions.get(topic);
      if (!admits) this.admissions.set(topic, (admits = new Set()));
      admits.add(admit);
    }
    return () => {
      if (admit) this.admissions.get(topic)?.delete(admit);
      if (!set.delete(handler) || set.size > 0 || this.topics.get(topic) !== set) return;
      this.topics.delete(topic);
      this.admissions.delete(topic);
      hooks.left?.();
    };
  }

  /** Whether a message on `topic` published by `from` may be delivered and forwarded. */
  admits(topic: string, from: PeerKey): boolean {
    const admits = this.admissions.get(topic);
    if (!admits || admits.size === 0) return true;
    for (const a of admits) if (a(from)) return true;
    return false;
  }

  has(topic: string): boolean {
    return this.topics.has(topic);
  }

  names(): string[] {
    return [...this.topics.keys()];
  }

  /** Hands a received message to its topic's handlers; false (and not counted) when none listens. */
  deliver(msg: GossipMessage): boolean {
    const handlers = [...(this.topics.get(msg.topic) ?? [])];
    if (handlers.length === 0) return false;
    this.counters.gossipIn++;
    this.counters.payload.add(channelOfTopic(msg.topic), 'in', msg.data.byteLength);
    for (const h of handlers) {
      Promise.resolve()
        .then(() => h(msg))
        .catch((err: unknown) => {
          this.counters.gossipDropped++;
          this.dropped(msg, err);
        });
    }
    return true;
  }
}
