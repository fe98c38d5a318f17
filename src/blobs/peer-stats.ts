/**
 * Counters of blob transfers between peers (docs/blobs.md "Blobs between peers"), and their
 * Prometheus series, read at scrape time. Every label comes from a closed set.
 */
import type { GaugeSource } from '../http/metrics.ts';

/** How an inbound blob request ended (`stopped`: the requester stopped reading, e.g. after a HEAD). */
export const SERVE_OUTCOMES = ['sent', 'stopped', 'not_found', 'unauthorized', 'unknown_context', 'malformed', 'failed'] as const;
export type ServeOutcome = (typeof SERVE_OUTCOMES)[number];

/** How one peer answered when asked for a blob. */
export const ASK_OUTCOMES = ['found', 'not_found', 'refused', 'bad_answer', 'failed', 'cancelled'] as const;
export type AskOutcome = (typeof ASK_OUTCOMES)[number];

/** How a transfer from the peer that had the blob ended (a refused one kept nothing). */
export const TRANSFER_OUTCOMES = ['ok', 'bad_size', 'bad_hash', 'oversized', 'timeout', 'failed', 'cancelled'] as const;
export type TransferOutcome = (typeof TRANSFER_OUTCOMES)[number];

/** How one announcement of a held blob in the DHT ended (`unsupported`: the node runs no DHT). */
export const ANNOUNCE_OUTCOMES = ['ok', 'no_peers', 'failed', 'unsupported', 'withdrawn'] as const;
export type AnnounceOutcome = (typeof ANNOUNCE_OUTCOMES)[number];

/**
 * The DHT step of a lookup, after the connected peers had no copy: `lookups` started, provider
 * records `found`, providers `skipped` (not a member of the context, or asked already), the
 * lookups that `located` a provider answering `found`, and those that found `none`.
 */
export const DHT_LOOKUP_OUTCOMES = ['lookups', 'found', 'skipped', 'located', 'none'] as const;
export type DhtLookupOutcome = (typeof DHT_LOOKUP_OUTCOMES)[number];

const zero = <K extends string>(keys: readonly K[]): Record<K, number> => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

export class BlobPeerStats {
  readonly served = zero(SERVE_OUTCOMES);
  readonly asked = zero(ASK_OUTCOMES);
  readonly transfers = zero(TRANSFER_OUTCOMES);
  /** lookups with no connected member peer of the context to ask */
  noPeers = 0;
  /** announcements of held blobs as DHT providers (announcer.ts) */
  readonly announced = zero(ANNOUNCE_OUTCOMES);
  /** the DHT step of lookups (fetcher.ts) */
  readonly dht = zero(DHT_LOOKUP_OUTCOMES);
}

const byOutcome = (counts: Record<string, number>) => () => Object.entries(counts).map(([outcome, value]) => ({ labels: { outcome }, value }));

export function blobPeerSeries(stats: BlobPeerStats): GaugeSource[] {
  return [
    {
      name: 'hearth_blob_peer_requests_served_total',
      type: 'counter',
      help: 'Blob requests from peers (/calimero/blob/0.0.2), by outcome',
      read: byOutcome(stats.served),
    },
    {
      name: 'hearth_blob_peer_asks_total',
      type: 'counter',
      help: 'Peers asked for a blob this node lacks, by their answer',
      read: byOutcome(stats.asked),
    },
    {
      name: 'hearth_blob_peer_transfers_total',
      type: 'counter',
      help: 'Blob transfers from peers, by outcome (only ok ones are kept)',
      read: byOutcome(stats.transfers),
    },
    {
      name: 'hearth_blob_peer_lookups_without_peers_total',
      type: 'counter',
      help: 'Blob lookups with no connected member peer of the context to ask',
      read: () => [{ labels: {}, value: stats.noPeers }],
    },
    {
      name: 'hearth_blob_dht_announcements_total',
      type: 'counter',
      help: 'Announcements of held blobs as DHT providers, by outcome (withdrawn: on delete)',
      read: byOutcome(stats.announced),
    },
    {
      name: 'hearth_blob_dht_lookups_total',
      type: 'counter',
      help: 'The DHT step of blob lookups: lookups, provider records found, providers skipped, lookups that located a copy, lookups that found none',
      read: () => Object.entries(stats.dht).map(([event, value]) => ({ labels: { event }, value })),
    },
  ];
}
