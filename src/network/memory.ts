/**
 * An in-process `Network` (network-port.ts) for tests of the domains that use the network: several
 * nodes in one process share a `MemoryHub`, which links them, partitions them and delivers gossip
 * and requests with the port's semantics (no self-delivery, size bounds, deadlines, refusals,
 * per-peer inbound limits, penalties and bans, the same status counters as libp2p). Delivery is
 * asynchronous, as on a real network, and bytes are copied. `network-port-suite.ts` runs the same
 * tests against this and the libp2p network, so the two cannot drift.
 */
import {
  CONTENT_KEY,
  DEFAULT_INBOUND_PER_PEER,
  MAX_FRAME_BYTES,
  MAX_GOSSIP_BYTES,
  PeerNetworkError,
  PeerRefusal,
  type GossipAdmission,
  type GossipHandler,
  type InboundOutcome,
  type Network,
  type NetworkStatus,
  type OutboundOutcome,
  type PeerEvent,
  type PeerKey,
  type PenaltyReason,
  type ProtocolOptions,
  type RequestHandler,
  type RequestOptions,
} from './network-port.ts';
import { NetworkCounters, OTHER_PROTOCOL } from './counters.ts';
import { ABORTED, deadline, raceAbort } from './deadline.ts';
import { libp2pPeerIdOf } from './peer-id.ts';
import { PenaltyBox, type BanPolicy } from './penalties.ts';
import { TopicHandlers } from './topics.ts';

const linkKey = (a: PeerKey, b: PeerKey): string => (a < b ? `${a}|${b}` : `${b}|${a}`);

interface Link {
  /** the node that made the link (its side is `outbound`) */
  initiator: PeerKey;
  openedAt: number;
}

/** Links in-memory nodes. Nodes join unlinked; `link`/`linkAll` connect them. */
export class MemoryHub {
  private readonly nodes = new Map<PeerKey, MemoryNetwork>();
  private readonly links = new Map<string, Link>();

  /**
   * Provider records by content key: the hub plays the DHT (a record put by any node is found by
   * any node that has a peer to ask). Tests may add records of their own, e.g. naming nodes that
   * are not on the hub (bogus records).
   */
  readonly providers = new Map<string, Set<PeerKey>>();

  /** A node on this hub (not yet linked to anyone); `dht: false` runs no DHT (no content routing). */
  join(self: PeerKey, opts: { banPolicy?: BanPolicy; dht?: boolean } = {}): MemoryNetwork {
    if (this.nodes.has(self)) throw new Error(`peer ${self} already on the hub`);
    const net = new MemoryNetwork(self, this, opts.banPolicy, opts.dht ?? true);
    this.nodes.set(self, net);
    // a kept link comes back when the node does (after the join returns, as a dial would)
    queueMicrotask(() => {
      for (const other of this.nodes.keys()) if (this.kept.has(linkKey(self, other))) this.link(other, self);
    });
    return net;
  }

  /** pairs linked again whenever both are on the hub (`keep`) */
  private readonly kept = new Set<string>();

  /**
   * Keeps two nodes linked: now if both are on the hub, and whenever one of them joins again (a
   * restart). Unlike libp2p's redial, a link cut by `unlink` or `partition` stays cut, so tests
   * keep control of partitions.
   */
  keepLinked(a: PeerKey, b: PeerKey): void {
    this.kept.add(linkKey(a, b));
    this.link(a, b);
  }

  /** Takes a node off the hub (as if it stopped): its links go, with disconnect events. */
  leave(self: PeerKey): void {
    for (const other of this.nodes.keys()) if (other !== self) this.unlink(self, other);
    this.nodes.delete(self);
  }

  /** Links two nodes (`a` initiating), unless either bans the other; true when they are linked. */
  link(a: PeerKey, b: PeerKey): boolean {
    const na = this.nodes.get(a);
    const nb = this.nodes.get(b);
    if (a === b || !na || !nb) return false;
    const k = linkKey(a, b);
    if (this.links.has(k)) return true;
    if (na.bans(b) || nb.bans(a)) return false;
    this.links.set(k, { initiator: a, openedAt: Date.now() });
    na.emitPeer({ type: 'connected', peer: b });
    nb.emitPeer({ type: 'connected', peer: a });
    return true;
  }

  unlink(a: PeerKey, b: PeerKey): void {
    if (!this.links.delete(linkKey(a, b))) return;
    this.nodes.get(a)?.emitPeer({ type: 'disconnected', peer: b });
    this.nodes.get(b)?.emitPeer({ type: 'disconnected', peer: a });
  }

  /** Links every pair of nodes on the hub. */
  linkAll(): void {
    const keys = [...this.nodes.keys()];
    for (const a of keys) for (const b of keys) if (a < b) this.link(a, b);
  }

  /** Cuts every link between the two sides (a network partition). */
  partition(left: PeerKey[], right: PeerKey[]): void {
    for (const a of left) for (const b of right) this.unlink(a, b);
  }

  linked(a: PeerKey, b: PeerKey): boolean {
    return this.links.has(linkKey(a, b));
  }

  /** @internal */
  linkOf(a: PeerKey, b: PeerKey): Link | undefined {
    return this.links.get(linkKey(a, b));
  }

  /** @internal */
  node(key: PeerKey): MemoryNetwork | undefined {
    return this.nodes.get(key);
  }

  /** @internal */
  neighbours(self: PeerKey): MemoryNetwork[] {
    return [...this.nodes.values()].filter((n) => n.self !== self && this.linked(self, n.self));
  }
}

interface Served {
  handler: RequestHandler;
  opts: ProtocolOptions;
  /** inbound exchanges in flight per peer */
  inflight: Map<PeerKey, number>;
}

export class MemoryNetwork implements Network {
  private readonly served = new Map<string, Served>();
  private readonly peerListeners = new Set<(e: PeerEvent) => void>();
  private readonly counters = new NetworkCounters();
  readonly payload = this.counters.payload;
  private readonly topics = new TopicHandlers(this.counters);
  private readonly box: PenaltyBox;
  /** every `penalize` call, in order (tests assert on it) */
  readonly penalties: { peer: PeerKey; reason: PenaltyReason; detail?: string }[] = [];
  private sequence = 0;
  /** ids of gossip messages seen, so a relayed copy is delivered and forwarded once (bounded) */
  private readonly seen = new Set<string>();

  /** providers found by `findProviders`: a request to one links to it, as libp2p dials a peer it learnt addresses of */
  private readonly learnt = new Set<PeerKey>();

  constructor(
    readonly self: PeerKey,
    private readonly hub: MemoryHub,
    banPolicy?: BanPolicy,
    private readonly dht = true,
  ) {
    this.box = new PenaltyBox(banPolicy);
  }

  /** gossip messages whose handler threw */
  get dropped(): number {
    return this.counters.gossipDropped;
  }

  subscribe(topic: string, handler: GossipHandler, admit?: GossipAdmission): () => void {
    return this.topics.add(topic, handler, {}, admit);
  }

  async publish(topic: string, data: Uint8Array): Promise<number> {
    if (data.byteLength > MAX_GOSSIP_BYTES) throw new PeerNetworkError('too_large', `gossip message of ${data.byteLength} bytes exceeds ${MAX_GOSSIP_BYTES}`);
    const targets = this.hub.neighbours(this.self).filter((n) => n.subscribed(topic));
    this.counters.published(topic, data.byteLength);
    const id = `${this.self}/${++this.sequence}`;
    this.seen.add(id);
    for (const t of targets) {
      const copy = data.slice();
      this.counters.bytesOut += copy.byteLength;
      setImmediate(() => t.deliver({ id, topic, from: this.self, via: this.self, data: copy }));
    }
    return targets.length;
  }

  topicPeers(topic: string): PeerKey[] {
    return this.hub
      .neighbours(this.self)
      .filter((n) => n.subscribed(topic))
      .map((n) => n.self);
  }

  peers(): PeerKey[] {
    return this.hub.neighbours(this.self).map((n) => n.self);
  }

  /** the hub's links are the connections: counting them is already cheap */
  peerCount(): number {
    return this.hub.neighbours(this.self).length;
  }

  addresses(): string[] {
    return [`/memory/${this.self}`];
  }

  /** Links to the node now, and again whenever it joins the hub later (a restart), while this node is on it. */
  keep(address: string): void {
    const peer = /^\/memory\/([0-9a-f]{64})$/.exec(address)?.[1];
    if (!peer) throw new Error(`not a memory address: ${address}`);
    this.hub.keepLinked(this.self, peer);
  }

  async dial(address: string, _opts?: { timeoutMs: number; signal?: AbortSignal }): Promise<PeerKey> {
    const peer = /^\/memory\/([0-9a-f]{64})$/.exec(address)?.[1];
    if (!peer || !this.hub.node(peer)) throw new PeerNetworkError('unreachable', `no node at ${address}`);
    if (!this.hub.link(this.self, peer)) throw new PeerNetworkError('unreachable', `${address} refused the connection`);
    return peer;
  }

  handle(protocol: string, handler: RequestHandler, opts: ProtocolOptions): void {
    if (this.served.has(protocol)) throw new Error(`protocol ${protocol} is already handled`);
    if (opts.maxRequestBytes > MAX_FRAME_BYTES) throw new Error(`${protocol}: maxRequestBytes past the frame bound of ${MAX_FRAME_BYTES}`);
    this.served.set(protocol, { handler, opts, inflight: new Map() });
  }

  async request(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array> {
    for await (const frame of this.requestStream(peer, protocol, data, opts)) return frame;
    throw new PeerNetworkError('protocol', `${protocol}: the peer answered nothing`);
  }

  async *requestStream(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): AsyncIterable<Uint8Array> {
    let outcome: OutboundOutcome = 'ok'; // also when the caller stops reading early
    try {
      yield* this.exchange(peer, protocol, data, opts);
    } catch (err) {
      outcome = err instanceof PeerNetworkError ? err.kind : 'protocol';
      throw err;
    } finally {
      this.counters.outbound(this.protocolLabel(protocol), outcome);
    }
  }

  async provide(key: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    if (!CONTENT_KEY.test(key)) throw new Error(`not a content key (64 lowercase hex): ${key.slice(0, 80)}`);
    if (!this.dht) throw new PeerNetworkError('unsupported', `provide ${key}: this node runs no DHT`);
    if (opts.signal?.aborted) throw new PeerNetworkError('aborted', `provide ${key}: aborted`);
    if (this.peerCount() === 0) throw new PeerNetworkError('unreachable', `provide ${key}: no DHT peer to take the record`);
    const set = this.hub.providers.get(key) ?? new Set<PeerKey>();
    set.add(this.self);
    this.hub.providers.set(key, set);
  }

  /** Unlike the DHT, the hub forgets the record at once (a DHT record lives until it expires). */
  async unprovide(key: string): Promise<void> {
    if (!CONTENT_KEY.test(key)) throw new Error(`not a content key (64 lowercase hex): ${key.slice(0, 80)}`);
    this.hub.providers.get(key)?.delete(this.self);
  }

  async *findProviders(key: string, opts: { timeoutMs: number; max: number; signal?: AbortSignal }): AsyncIterable<PeerKey> {
    if (!CONTENT_KEY.test(key)) throw new Error(`not a content key (64 lowercase hex): ${key.slice(0, 80)}`);
    if (!this.dht || this.peerCount() === 0) return; // no DHT, or no peer to ask
    const until = Date.now() + opts.timeoutMs;
    let found = 0;
    for (const peer of [...(this.hub.providers.get(key) ?? [])]) {
      if (found >= opts.max || opts.signal?.aborted || Date.now() > until) return;
      if (peer === this.self) continue;
      this.learnt.add(peer);
      found++;
      yield peer;
    }
  }

  private async *exchange(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): AsyncIterable<Uint8Array> {
    if (this.learnt.has(peer) && !this.hub.linked(this.self, peer)) this.hub.link(this.self, peer);
    const remote = this.hub.linked(this.self, peer) ? this.hub.node(peer) : undefined;
    if (!remote) throw new PeerNetworkError('unreachable', `peer ${peer} is not connected`);
    const timer = deadline(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timer.signal]) : timer.signal;
    const failure = (): PeerNetworkError =>
      opts.signal?.aborted ? new PeerNetworkError('aborted', `${protocol}: aborted`) : new PeerNetworkError('timeout', `${protocol}: no answer within ${opts.timeoutMs} ms`);
    this.counters.bytesOut += data.byteLength;
    const frames = remote.serve(this.self, protocol, data.slice(), signal);
    const iterator = frames[Symbol.asyncIterator]();
    try {
      for (;;) {
        if (signal.aborted) throw failure();
        const next = await raceAbort(iterator.next(), signal);
        if (next === ABORTED) throw failure();
        if (next.done) return;
        if (next.value.byteLength > opts.maxResponseFrameBytes) {
          throw new PeerNetworkError('too_large', `${protocol}: response frame of ${next.value.byteLength} bytes exceeds ${opts.maxResponseFrameBytes}`);
        }
        this.counters.bytesIn += next.value.byteLength;
        yield next.value.slice();
      }
    } finally {
      timer.clear();
      void iterator.return?.();
    }
  }

  onPeer(listener: (e: PeerEvent) => void): () => void {
    this.peerListeners.add(listener);
    return () => this.peerListeners.delete(listener);
  }

  penalize(peer: PeerKey, reason: PenaltyReason, detail?: string): void {
    this.penalties.push(detail === undefined ? { peer, reason } : { peer, reason, detail });
    if (this.box.record(peer, reason)) this.hub.unlink(this.self, peer);
  }

  status(): NetworkStatus {
    const self = this.addresses();
    return {
      peerKey: this.self,
      peerId: libp2pPeerIdOf(this.self),
      listenAddresses: self,
      externalAddresses: self,
      connections: this.peers().map((peer) => {
        const link = this.hub.linkOf(this.self, peer)!;
        return {
          peer,
          peerId: libp2pPeerIdOf(peer),
          remoteAddress: `/memory/${peer}`,
          direction: link.initiator === this.self ? ('outbound' as const) : ('inbound' as const),
          openedAt: link.openedAt,
        };
      }),
      topics: this.topics.names().map((topic) => ({ topic, peers: this.topicPeers(topic).length })),
      bytes: this.counters.bytes(),
      gossip: this.counters.gossip(),
      requests: this.counters.requests(),
      penalties: this.box.penalties(),
      banned: this.box.banned(),
      payload: this.payload.list(),
    };
  }

  /** @internal */
  bans(peer: PeerKey): boolean {
    return this.box.isBanned(peer);
  }

  /** @internal */
  subscribed(topic: string): boolean {
    return this.topics.has(topic);
  }

  /** @internal */
  emitPeer(e: PeerEvent): void {
    for (const l of [...this.peerListeners]) l(e);
  }

  /**
   * @internal Delivers a gossip message once and forwards it to the other subscribed neighbours,
   * as gossipsub relays along its mesh: nodes that are not linked still hear each other through a
   * node linked to both.
   */
  deliver(msg: { id: string; topic: string; from: PeerKey; via: PeerKey; data: Uint8Array }): void {
    if (!this.hub.linked(this.self, msg.via) || this.seen.has(msg.id)) return; // the link went while in flight, or a second copy
    this.seen.add(msg.id);
    if (this.seen.size > 10_000) this.seen.delete(this.seen.values().next().value!);
    if (!this.subscribed(msg.topic)) return;
    // checked before delivering and forwarding, as gossipsub's topic validators are (libp2p.ts)
    if (!this.topics.admits(msg.topic, msg.from)) return this.penalize(msg.from, 'unauthorized', `gossip on ${msg.topic} from a publisher the topic does not admit`);
    if (this.topics.deliver({ topic: msg.topic, from: msg.from, data: msg.data })) this.counters.bytesIn += msg.data.byteLength;
    for (const n of this.hub.neighbours(this.self)) {
      if (n.self === msg.via || n.self === msg.from || !n.subscribed(msg.topic)) continue;
      const copy = msg.data.slice();
      setImmediate(() => n.deliver({ ...msg, via: this.self, data: copy }));
    }
  }

  /** @internal Runs an inbound exchange from `peer`: bounds first, then the handler. */
  async *serve(peer: PeerKey, protocol: string, request: Uint8Array, requesterSignal: AbortSignal): AsyncIterable<Uint8Array> {
    const served = this.served.get(protocol);
    if (!served) {
      this.penalize(peer, 'unknown_protocol', protocol);
      throw new PeerNetworkError('unsupported', `peer does not serve ${protocol}`);
    }
    let outcome: InboundOutcome | undefined;
    const end = (o: InboundOutcome) => {
      if (outcome !== undefined) return;
      outcome = o;
      this.counters.inbound(protocol, o);
    };
    if (request.byteLength > served.opts.maxRequestBytes) {
      this.penalize(peer, 'oversized_frame', `${protocol}: request of ${request.byteLength} bytes`);
      end('too_large');
      throw new PeerNetworkError('too_large', `${protocol}: request of ${request.byteLength} bytes exceeds the peer's bound of ${served.opts.maxRequestBytes}`);
    }
    const inflight = served.inflight.get(peer) ?? 0;
    if (inflight >= (served.opts.maxInboundPerPeer ?? DEFAULT_INBOUND_PER_PEER)) {
      end('busy');
      throw new PeerNetworkError('refused', `${protocol}: too many concurrent requests`);
    }
    this.counters.bytesIn += request.byteLength;
    served.inflight.set(peer, inflight + 1);
    const timer = deadline(served.opts.timeoutMs);
    const signal = AbortSignal.any([requesterSignal, timer.signal]);
    // the handler's deadline ends the exchange whether or not the handler heeds its signal
    const guard = <T>(p: Promise<T>): Promise<T> =>
      raceAbort(p, signal).then((v) => {
        if (v !== ABORTED) return v;
        if (timer.signal.aborted && !requesterSignal.aborted) {
          end('timeout');
          throw new PeerNetworkError('protocol', `${protocol}: the peer reset the exchange (its deadline passed)`);
        }
        end('cancelled');
        throw new PeerNetworkError('aborted', `${protocol}: the requester went away`);
      });
    try {
      let answer: Uint8Array | AsyncIterable<Uint8Array>;
      try {
        answer = await guard(Promise.resolve().then(() => served.handler(request, { peer, protocol, signal })));
      } catch (err) {
        throw this.refusalOf(err, end);
      }
      if (answer instanceof Uint8Array) {
        this.counters.bytesOut += answer.byteLength;
        end('ok'); // one frame is the whole answer, delivered with this yield
        yield answer;
        return;
      }
      const frames = answer[Symbol.asyncIterator]();
      try {
        for (;;) {
          const next = await guard(frames.next());
          if (next.done) break;
          this.counters.bytesOut += next.value.byteLength;
          yield next.value;
        }
      } catch (err) {
        throw this.refusalOf(err, end);
      } finally {
        void frames.return?.();
      }
      end('ok');
    } finally {
      timer.clear();
      if (outcome === undefined) end('cancelled'); // the requester stopped reading
      served.inflight.set(peer, (served.inflight.get(peer) ?? 1) - 1);
    }
  }

  private refusalOf(err: unknown, end: (o: InboundOutcome) => void): PeerNetworkError {
    if (err instanceof PeerNetworkError) return err; // already counted by the guard
    end(err instanceof PeerRefusal ? 'refused' : 'error');
    return new PeerNetworkError('refused', err instanceof PeerRefusal ? err.message : 'the peer could not answer the request');
  }

  private protocolLabel(protocol: string): string {
    return this.served.has(protocol) ? protocol : OTHER_PROTOCOL;
  }
}

