/**
 * Content routing over the Kademlia DHT (issue #24 "content routing for blobs"; docs/network.md
 * "Blob providers in the DHT"): the `provide` / `unprovide` / `findProviders` part of the
 * `Network` port for the libp2p network. A content key (a SHA-256 digest in hex: a blob id) is
 * named in the DHT by a CIDv1 of codec `raw` over that digest as a sha2-256 multihash, so provider
 * records land on the nodes closest to the key. libp2p.ts owns the node and delegates here.
 */
import './polyfill.ts';
import type { Libp2p } from '@libp2p/interface';
import { CID } from 'multiformats/cid';
import { create as createDigest } from 'multiformats/hashes/digest';
import { CONTENT_KEY, PeerNetworkError, type PeerKey } from './network-port.ts';
import { deadline } from './deadline.ts';
import { peerKeyOf } from './peer-id.ts';

/** multicodec of raw bytes and of the sha2-256 multihash */
const RAW = 0x55;
const SHA2_256 = 0x12;

/** how long one announcement may take (a walk to the closest peers, then a record to each) */
export const PROVIDE_TIMEOUT_MS = 60_000;

/** The CID a content key goes by in the DHT. Throws on a key that is not 64 lowercase hex. */
export function cidOfKey(key: string): CID {
  if (!CONTENT_KEY.test(key)) throw new Error(`not a content key (64 lowercase hex): ${JSON.stringify(key.slice(0, 80))}`);
  return CID.createV1(RAW, createDigest(SHA2_256, Buffer.from(key, 'hex')));
}

export interface ContentRoutingHost {
  /** the started node, undefined before start and after stop */
  node(): Libp2p | undefined;
  /** whether the node runs the DHT (`[network] dht`) */
  dht: boolean;
  self: PeerKey;
  /** aborted when the network stops */
  stopping: AbortSignal;
}

export class DhtContentRouting {
  constructor(private readonly host: ContentRoutingHost) {}

  async provide(key: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    const cid = cidOfKey(key);
    const node = this.host.node();
    if (!this.host.dht) throw new PeerNetworkError('unsupported', `provide ${key}: this node runs no DHT`);
    if (opts.signal?.aborted) throw new PeerNetworkError('aborted', `provide ${key}: aborted`);
    if (!node) throw new PeerNetworkError('unreachable', `provide ${key}: the network is not started`);
    // with an empty routing table the DHT would wait for a peer until the deadline: say so at once
    const table = (node.services as { dht?: { routingTable?: { size: number } } }).dht?.routingTable;
    if (table?.size === 0) throw new PeerNetworkError('unreachable', `provide ${key}: no DHT peer to take the record yet`);
    const timer = deadline(PROVIDE_TIMEOUT_MS);
    const signal = AbortSignal.any([timer.signal, this.host.stopping, ...(opts.signal ? [opts.signal] : [])]);
    try {
      await node.contentRouting.provide(cid, { signal });
    } catch (err) {
      if (opts.signal?.aborted || this.host.stopping.aborted) throw new PeerNetworkError('aborted', `provide ${key}: aborted`);
      if (timer.signal.aborted) throw new PeerNetworkError('timeout', `provide ${key}: not announced within ${PROVIDE_TIMEOUT_MS} ms`);
      throw new PeerNetworkError('unreachable', `provide ${key}: ${(err as Error).message}`);
    } finally {
      timer.clear();
    }
  }

  async unprovide(key: string): Promise<void> {
    const cid = cidOfKey(key);
    const node = this.host.node();
    if (!this.host.dht || !node) return;
    // the DHT forgets the key for its re-announcements; records on other nodes expire on their own
    await node.contentRouting.cancelReprovide(cid).catch(() => undefined);
  }

  async *findProviders(key: string, opts: { timeoutMs: number; max: number; signal?: AbortSignal }): AsyncIterable<PeerKey> {
    const cid = cidOfKey(key);
    const node = this.host.node();
    if (!this.host.dht || !node || opts.max <= 0) return;
    const timer = deadline(opts.timeoutMs);
    const signal = AbortSignal.any([timer.signal, this.host.stopping, ...(opts.signal ? [opts.signal] : [])]);
    let found = 0;
    try {
      // libp2p stores the addresses a record carries in its peer store, and dials a peer it has no
      // address of through peer routing: a request to a yielded provider reaches it
      for await (const info of node.contentRouting.findProviders(cid, { signal })) {
        const peer = peerKeyOf(info.id);
        if (!peer || peer === this.host.self) continue; // not an Ed25519 node key: no hearth node
        yield peer;
        if (++found >= opts.max || signal.aborted) return;
      }
    } catch {
      // the deadline, the caller's signal, or a query that found no peer to ask: the search ends
    } finally {
      timer.clear();
    }
  }
}
