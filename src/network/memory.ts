/**
 * An in-process `Network` (contract.ts) for tests of the domains that use the network: several
 * nodes in one process share a `MemoryHub`, which links them, partitions them and delivers gossip
 * and requests with the contract's semantics (no self-delivery, size bounds, deadlines, refusals,
 * per-peer inbound limits). Delivery is asynchronous, as on a real network, and bytes are copied.
 */
import {
  MAX_GOSSIP_BYTES,
  NetworkError,
  PeerRefusal,
  type GossipHandler,
  type Network,
  type PeerEvent,
  type PeerKey,
  type ProtocolOptions,
  type RequestHandler,
  type RequestOptions,
} from './contract.ts';

const DEFAULT_INBOUND_PER_PEER = 8;

const linkKey = (a: PeerKey, b: PeerKey): string => (a < b ? `${a}|${b}` : `${b}|${a}`);

/** Links in-memory nodes. Nodes join unlinked; `link`/`linkAll` connect them. */
export class MemoryHub {
  private readonly nodes = new Map<PeerKey, MemoryNetwork>();
  private readonly links = new Set<string>();

  /** A node on this hub (not yet linked to anyone). */
  join(self: PeerKey): MemoryNetwork {
    if (this.nodes.has(self)) throw new Error(`peer ${self} already on the hub`);
    const net = new MemoryNetwork(self, this);
    this.nodes.set(self, net);
    return net;
  }

  /** Takes a node off the hub (as if it stopped): its links go, with disconnect events. */
  leave(self: PeerKey): void {
    for (const other of this.nodes.keys()) if (other !== self) this.unlink(self, other);
    this.nodes.delete(self);
  }

  link(a: PeerKey, b: PeerKey): void {
    if (a === b || !this.nodes.has(a) || !this.nodes.has(b)) return;
    const k = linkKey(a, b);
    if (this.links.has(k)) return;
    this.links.add(k);
    this.nodes.get(a)!.emitPeer({ type: 'connected', peer: b });
    this.nodes.get(b)!.emitPeer({ type: 'connected', peer: a });
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
  private readonly topics = new Map<string, Set<GossipHandler>>();
  private readonly served = new Map<string, Served>();
  private readonly peerListeners = new Set<(e: PeerEvent) => void>();
  /** every `penalize` call, in order (tests assert on it) */
  readonly penalties: { peer: PeerKey; reason: string }[] = [];
  /** gossip messages whose handler threw */
  dropped = 0;
  private sequence = 0;
  /** ids of gossip messages seen, so a relayed copy is delivered and forwarded once (bounded) */
  private readonly seen = new Set<string>();

  constructor(
    readonly self: PeerKey,
    private readonly hub: MemoryHub,
  ) {}

  subscribe(topic: string, handler: GossipHandler): () => void {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size === 0 && this.topics.get(topic) === set) this.topics.delete(topic);
    };
  }

  async publish(topic: string, data: Uint8Array): Promise<number> {
    if (data.byteLength > MAX_GOSSIP_BYTES) throw new NetworkError('too_large', `gossip message of ${data.byteLength} bytes exceeds ${MAX_GOSSIP_BYTES}`);
    const targets = this.hub.neighbours(this.self).filter((n) => n.subscribed(topic));
    const id = `${this.self}/${++this.sequence}`;
    this.seen.add(id);
    for (const t of targets) {
      const copy = data.slice();
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

  addresses(): string[] {
    return [`/memory/${this.self}`];
  }

  async dial(address: string, _opts?: { timeoutMs: number; signal?: AbortSignal }): Promise<PeerKey> {
    const peer = /^\/memory\/([0-9a-f]{64})$/.exec(address)?.[1];
    if (!peer || !this.hub.node(peer)) throw new NetworkError('unreachable', `no node at ${address}`);
    this.hub.link(this.self, peer);
    return peer;
  }

  handle(protocol: string, handler: RequestHandler, opts: ProtocolOptions): void {
    if (this.served.has(protocol)) throw new Error(`protocol ${protocol} is already handled`);
    this.served.set(protocol, { handler, opts, inflight: new Map() });
  }

  async request(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array> {
    for await (const frame of this.requestStream(peer, protocol, data, opts)) return frame;
    throw new NetworkError('protocol', `${protocol}: the peer answered nothing`);
  }

  async *requestStream(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): AsyncIterable<Uint8Array> {
    const remote = this.hub.linked(this.self, peer) ? this.hub.node(peer) : undefined;
    if (!remote) throw new NetworkError('unreachable', `peer ${peer} is not connected`);
    const deadline = AbortSignal.timeout(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
    const failure = (): NetworkError =>
      opts.signal?.aborted ? new NetworkError('aborted', `${protocol}: aborted`) : new NetworkError('timeout', `${protocol}: no answer within ${opts.timeoutMs} ms`);
    const frames = remote.serve(this.self, protocol, data.slice(), signal);
    const iterator = frames[Symbol.asyncIterator]();
    try {
      for (;;) {
        if (signal.aborted) throw failure();
        const next = await raceAbort(iterator.next(), signal);
        if (next === ABORTED) throw failure();
        if (next.done) return;
        if (next.value.byteLength > opts.maxResponseFrameBytes) {
          throw new NetworkError('too_large', `${protocol}: response frame of ${next.value.byteLength} bytes exceeds ${opts.maxResponseFrameBytes}`);
        }
        yield next.value.slice();
      }
    } finally {
      void iterator.return?.();
    }
  }

  onPeer(listener: (e: PeerEvent) => void): () => void {
    this.peerListeners.add(listener);
    return () => this.peerListeners.delete(listener);
  }

  penalize(peer: PeerKey, reason: string): void {
    this.penalties.push({ peer, reason });
  }

  /** @internal */
  subscribed(topic: string): boolean {
    return (this.topics.get(topic)?.size ?? 0) > 0;
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
    for (const h of [...(this.topics.get(msg.topic) ?? [])]) {
      Promise.resolve()
        .then(() => h({ topic: msg.topic, from: msg.from, data: msg.data }))
        .catch(() => {
          this.dropped++;
        });
    }
    for (const n of this.hub.neighbours(this.self)) {
      if (n.self === msg.via || n.self === msg.from || !n.subscribed(msg.topic)) continue;
      const copy = msg.data.slice();
      setImmediate(() => n.deliver({ ...msg, via: this.self, data: copy }));
    }
  }

  /** @internal Runs an inbound exchange from `peer`: bounds first, then the handler. */
  async *serve(peer: PeerKey, protocol: string, request: Uint8Array, requesterSignal: AbortSignal): AsyncIterable<Uint8Array> {
    const served = this.served.get(protocol);
    if (!served) throw new NetworkError('unsupported', `peer does not serve ${protocol}`);
    if (request.byteLength > served.opts.maxRequestBytes) {
      this.penalize(peer, `${protocol}: oversized request`);
      throw new NetworkError('protocol', `${protocol}: request of ${request.byteLength} bytes refused`);
    }
    const inflight = served.inflight.get(peer) ?? 0;
    if (inflight >= (served.opts.maxInboundPerPeer ?? DEFAULT_INBOUND_PER_PEER)) {
      throw new NetworkError('refused', `${protocol}: too many concurrent requests`);
    }
    served.inflight.set(peer, inflight + 1);
    const signal = AbortSignal.any([requesterSignal, AbortSignal.timeout(served.opts.timeoutMs)]);
    try {
      let answer: Uint8Array | AsyncIterable<Uint8Array>;
      try {
        answer = await served.handler(request, { peer, protocol, signal });
      } catch (err) {
        throw refusalOf(err);
      }
      if (answer instanceof Uint8Array) {
        yield answer;
        return;
      }
      try {
        for await (const frame of answer) {
          if (signal.aborted) return;
          yield frame;
        }
      } catch (err) {
        throw refusalOf(err);
      }
    } finally {
      served.inflight.set(peer, (served.inflight.get(peer) ?? 1) - 1);
    }
  }
}

function refusalOf(err: unknown): NetworkError {
  if (err instanceof NetworkError) return err;
  return new NetworkError('refused', err instanceof PeerRefusal ? err.message : 'the peer could not answer the request');
}

const ABORTED = Symbol('aborted');

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
