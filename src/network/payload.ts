/**
 * Payload bytes by channel (issue #24 "Scale"): what replication costs per write, apart from the
 * connection's own framing that `bytes` counts. A channel is what the bytes are for:
 * - `gossip`: messages on a context's topic (deltas and heads), published or received
 * - `governance`: messages on a namespace topic, and the namespace request kinds (backfill, join, push)
 * - `backfill`: context backfill exchanges (a peer's missing deltas, request and answer frames)
 * - `sync`: context heads and snapshot exchanges
 * - `other`: any other sync-stream kind
 * Received gossip is counted once per message handed to the handlers (gossipsub drops duplicate
 * copies below this: their cost shows in `bytes` only). The counters live in `NetworkCounters`,
 * so both networks report them the same way; the stream router adds the exchanges' share.
 */
import { namespaceTopic } from './topic-names.ts';

export const PAYLOAD_CHANNELS = ['gossip', 'governance', 'backfill', 'sync', 'other'] as const;
export type PayloadChannel = (typeof PAYLOAD_CHANNELS)[number];
export type PayloadDirection = 'in' | 'out';

export interface PayloadCount {
  channel: PayloadChannel;
  direction: PayloadDirection;
  bytes: number;
}

const NAMESPACE_PREFIX = namespaceTopic('');

/** The channel of a gossip topic. */
export function channelOfTopic(topic: string): PayloadChannel {
  return topic.startsWith(NAMESPACE_PREFIX) ? 'governance' : 'gossip';
}

/** The channel of a sync-stream request kind (src/sync/wire.ts, src/governance/replication/wire.ts). */
export function channelOfKind(kind: string): PayloadChannel {
  if (kind === 'ContextBackfillRequest') return 'backfill';
  if (kind === 'ContextHeadsRequest' || kind === 'ContextSnapshotRequest') return 'sync';
  if (kind.startsWith('Namespace')) return 'governance';
  return 'other';
}

export class PayloadCounters {
  private readonly totals = new Map<string, number>();

  add(channel: PayloadChannel, direction: PayloadDirection, bytes: number): void {
    const key = `${channel} ${direction}`;
    this.totals.set(key, (this.totals.get(key) ?? 0) + bytes);
  }

  /** Every channel and direction, zeros included (a closed set of labels). */
  list(): PayloadCount[] {
    return PAYLOAD_CHANNELS.flatMap((channel) =>
      (['in', 'out'] as const).map((direction) => ({ channel, direction, bytes: this.totals.get(`${channel} ${direction}`) ?? 0 })),
    );
  }
}
