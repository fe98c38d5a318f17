/**
 * The traffic counters behind `Network.status()` (bytes, gossip messages, exchanges by protocol,
 * direction and outcome), shared by the libp2p and in-memory networks so their figures mean the
 * same thing. Protocol labels are bounded by the caller (`protocolLabel`).
 */
import type { InboundOutcome, NetworkStatus, OutboundOutcome, RequestCount } from './network-port.ts';
import { channelOfTopic, PayloadCounters } from './payload.ts';

/** Outcomes counted as an inbound refusal in `requests.refused`. */
const REFUSALS: ReadonlySet<string> = new Set<InboundOutcome>(['refused', 'busy', 'too_large']);

/** Protocols a node does not serve are counted under one label, so labels stay a closed set. */
export const OTHER_PROTOCOL = 'other';

export class NetworkCounters {
  bytesIn = 0;
  bytesOut = 0;
  gossipIn = 0;
  gossipOut = 0;
  gossipDropped = 0;
  private readonly exchanges = new Map<string, RequestCount>();
  /** payload bytes by channel (payload.ts); the stream router adds the exchanges' share */
  readonly payload = new PayloadCounters();

  /** One gossip message published on `topic`. */
  published(topic: string, bytes: number): void {
    this.gossipOut++;
    this.payload.add(channelOfTopic(topic), 'out', bytes);
  }

  inbound(protocol: string, outcome: InboundOutcome): void {
    this.exchange(protocol, 'in', outcome);
  }

  outbound(protocol: string, outcome: OutboundOutcome): void {
    this.exchange(protocol, 'out', outcome);
  }

  gossip(): NetworkStatus['gossip'] {
    return { in: this.gossipIn, out: this.gossipOut, dropped: this.gossipDropped };
  }

  bytes(): NetworkStatus['bytes'] {
    return { in: this.bytesIn, out: this.bytesOut };
  }

  requests(): NetworkStatus['requests'] {
    const byProtocol = [...this.exchanges.values()].map((r) => ({ ...r }));
    const sum = (f: (r: RequestCount) => boolean) => byProtocol.filter(f).reduce((n, r) => n + r.count, 0);
    return {
      in: sum((r) => r.direction === 'in'),
      out: sum((r) => r.direction === 'out'),
      refused: sum((r) => r.direction === 'in' && REFUSALS.has(r.outcome)),
      byProtocol,
    };
  }

  private exchange(protocol: string, direction: 'in' | 'out', outcome: InboundOutcome | OutboundOutcome): void {
    const key = `${direction} ${protocol} ${outcome}`;
    const entry = this.exchanges.get(key);
    if (entry) entry.count++;
    else this.exchanges.set(key, { protocol, direction, outcome, count: 1 });
  }
}
