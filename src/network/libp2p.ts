/**
 * The node's `Network` over libp2p 3 (issue #12 §1; domain.md §1.1–§1.5): TCP, Noise, yamux,
 * identify, ping, gossipsub and optional mDNS, with the peer id derived from the node signing key.
 * Gossip and peer events map onto the port here; the libp2p node's transports and services
 * are wired in libp2p-node.ts, the internet half (reachability, relays, upgrades, QUIC listening)
 * runs in libp2p-internet.ts, request/response exchanges in exchange.ts, bootstrap redial in
 * bootstrap.ts, bans in penalties.ts, traffic counting in traffic.ts. Nothing outside
 * `src/network/` imports libp2p. docs/network.md describes the whole.
 *
 * @example
 * const net = createLibp2pNetwork({ privateKey, host: '0.0.0.0', port: 2428, bootstrap: [], mdns: false, logger });
 * await net.start();
 * // ... hand `net` to the domains ...
 * await net.stop();
 */
import './polyfill.ts';
import { isIP } from 'node:net';
import type { KeyObject } from 'node:crypto';
import type { Message } from '@libp2p/gossipsub';
import type { TopicValidatorFn } from '@libp2p/gossipsub';
import { meshSize } from './gossip-mesh.ts';
import { AddressBans } from './address-bans.ts';
import type { Connection, PeerId, PeerInfo } from '@libp2p/interface';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import type { Logger } from 'pino';
import { Bootstrapper, DEFAULT_REDIAL, type RedialPolicy } from './bootstrap.ts';
import {
  DEFAULT_INBOUND_PER_PEER,
  MAX_FRAME_BYTES,
  MAX_GOSSIP_BYTES,
  PeerNetworkError,
  type GossipAdmission,
  type GossipHandler,
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
import { deadline } from './deadline.ts';
import { requestFrames, serveStream, type ExchangeHost, type Served } from './exchange.ts';
import { bootstrapPeer, keysOf, libp2pPeerIdOf, libp2pPrivateKey, peerIdOfKey, peerKeyOf } from './peer-id.ts';
import { publicKeyOf } from '../crypto/keys.ts';
import { DEFAULT_BAN_POLICY, PenaltyBox, type BanPolicy } from './penalties.ts';
import { TopicHandlers } from './topics.ts';
import { DhtContentRouting } from './content-routing.ts';
import { dialProtocolRetrying } from './dial-retry.ts';
import { checkPeerAddresses, dialableHere, loadQuicTransport, quicFirstAddresses, quicRequirement } from './quic.ts';
import { DEFAULT_INTERNET, isRelayed, type InternetOptions } from './internet.ts';
import type { Libp2pNode } from './libp2p-node.ts';
import { MAX_STREAMS_PER_CONNECTION } from './stream-io.ts';
import { Libp2pInternet } from './libp2p-internet.ts';

export interface Libp2pNetworkOptions {
  /** the node signing key (`HomePaths.nodeKey`, an Ed25519 private `KeyObject`): the peer id derives from it */
  privateKey: KeyObject;
  /** the listen host: an IPv4 or IPv6 literal (`0.0.0.0` and `::` listen on every interface) */
  host: string;
  /** the swarm port; 0 picks a free one (`addresses()` reports it) */
  port: number;
  /** multiaddrs (with `/p2p/<peer id>`) dialed at start and kept connected */
  bootstrap?: string[];
  /** local discovery by multicast DNS (off unless asked, as the reference's `merod init`) */
  mdns?: boolean;
  /** mDNS query interval (default 10 s) */
  mdnsIntervalMs?: number;
  logger: Logger;
  banPolicy?: BanPolicy;
  redial?: Partial<RedialPolicy>;
  /** deadline of a dial made on a peer found by mDNS (default 10 s) */
  discoveryDialTimeoutMs?: number;
  /** relays, hole punching, AutoNAT, DHT (default DEFAULT_INTERNET) */
  internet?: Partial<InternetOptions>;
}

/** A libp2p network, not yet started. Throws on an invalid key, host or bootstrap address. */
export function createLibp2pNetwork(opts: Libp2pNetworkOptions): Libp2pNetwork {
  return new Libp2pNetwork(opts);
}

export class Libp2pNetwork implements Network {
  readonly self: PeerKey;
  private node: Libp2pNode | undefined;
  /** the libp2p stack (libp2p-node.ts), loaded by `start` */
  private stack?: typeof import('./libp2p-node.ts');
  /** gossipsub's check of every message (gossip-service.ts), made by `start` with the stack */
  private validator?: TopicValidatorFn;
  /** relays, hole punching, reachability, QUIC listening (libp2p-internet.ts) */
  private readonly internet: Libp2pInternet;
  private state: 'new' | 'started' | 'stopped' = 'new';
  private readonly log: Logger;
  private readonly listen: Multiaddr;
  private readonly bootstrapper: Bootstrapper;
  private readonly served = new Map<string, Served>();
  private readonly peerListeners = new Set<(e: PeerEvent) => void>();
  /** peers whose connection was announced to the listeners (a disconnect is announced only for these) */
  private readonly announced = new Set<PeerKey>();
  /**
   * peers libp2p holds a connection to, as its peer:connect / peer:disconnect events say (the first
   * connection to a peer opens, the last closes): `getPeers()` without walking the connections
   */
  private readonly connected = new Set<PeerKey>();
  private readonly counters = new NetworkCounters();
  readonly payload = this.counters.payload;
  private readonly topics = new TopicHandlers(this.counters, (msg, err) =>
    this.log.debug({ peer: msg.from, topic: msg.topic, err: (err as Error)?.message }, 'network: gossip message dropped by its handler'),
  );
  private readonly box: PenaltyBox;
  /** addresses from which several banned identities came: refused before the handshake */
  private readonly addressBans = new AddressBans();
  private readonly stopper = new AbortController();
  private readonly exchangeHost: ExchangeHost;
  private readonly content: DhtContentRouting;

  constructor(private readonly opts: Libp2pNetworkOptions) {
    this.self = publicKeyOf(opts.privateKey);
    libp2pPrivateKey(opts.privateKey); // refuses a key that is not Ed25519 now, not at start
    this.log = opts.logger.child({ component: 'network' });
    this.box = new PenaltyBox(opts.banPolicy ?? DEFAULT_BAN_POLICY);
    const family = isIP(opts.host);
    if (family === 0) throw new Error(`network: the listen host must be an IP address, got ${JSON.stringify(opts.host)}`);
    if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65_535) throw new Error(`network: invalid swarm port ${opts.port}`);
    this.listen = multiaddr(`/ip${family}/${opts.host}/tcp/${opts.port}`);
    try {
      checkPeerAddresses(opts.bootstrap ?? []); // a QUIC address on Node.js 20: one line at start, not a dial failing for ever
    } catch (err) {
      throw new Error(`network: bootstrap address ${(err as Error).message}`);
    }
    const bootstrap = (opts.bootstrap ?? []).map((address) => ({ address, peer: bootstrapPeer(address) }));
    this.bootstrapper = new Bootstrapper(
      bootstrap,
      {
        dial: (address, signal) => this.dialWith(address, signal, 'bootstrap dial'),
        connected: (peer) => this.isConnected(peer),
        onPeer: (l) => this.onPeer(l),
        log: this.log,
      },
      { ...DEFAULT_REDIAL, ...opts.redial },
    );
    const internet: InternetOptions = { ...DEFAULT_INTERNET, ...opts.internet };
    const live = () => (this.state === 'started' ? this.node : undefined);
    this.content = new DhtContentRouting({ node: live, dht: internet.dht, self: this.self, stopping: this.stopper.signal });
    this.internet = new Libp2pInternet({
      options: internet,
      log: this.log,
      listen: this.listen,
      node: () => this.node,
      started: () => this.state === 'started',
      stopping: this.stopper.signal,
      penalize: (peer, reason, detail) => this.penalize(peer, reason, detail),
      request: (peer, protocol, data, o) => this.request(peer, protocol, data, o),
      handle: (protocol, handler, o) => this.handle(protocol, handler, o),
      progressed: (peer) => this.bootstrapper.progressed(peer),
    });
    this.exchangeHost = {
      counters: this.counters,
      log: this.log,
      stopping: this.stopper.signal,
      penalize: (peer, reason, detail) => this.penalize(peer, reason, detail),
      isBanned: (peer) => this.box.isBanned(peer),
    };
  }

  /** Listens, registers the protocols and topics asked for so far, dials the bootstrap peers. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`network: cannot start a network that is ${this.state}`);
    this.state = 'started';
    // the libp2p stack (libp2p-node.ts and what it imports) loads here, not with this module
    const [stack, quic] = await Promise.all([import('./libp2p-node.ts'), loadQuicTransport(this.log)]);
    this.stack = stack;
    this.validator = stack.gossipValidator((topic, from) => this.topics.admits(topic, from), (peer, reason, detail) => this.penalize(peer, reason, detail));
    const node = await stack.createLibp2pNode(
      { privateKey: this.opts.privateKey, listen: this.listen, quic, internet: this.internet.options, mdns: this.opts.mdns, mdnsIntervalMs: this.opts.mdnsIntervalMs },
      {
        counters: this.counters,
        isBanned: (peer) => this.box.isBanned(peer),
        addressBanned: (address) => this.addressBans.denies(address),
        penalize: (peer, reason, detail) => this.penalize(peer, reason, detail),
        components: (c) => (this.internet.components = c),
        relayGuard: this.internet.relayGuard,
      },
    );
    this.node = node;
    node.addEventListener('peer:connect', (e) => this.peerEvent('connected', e.detail));
    node.addEventListener('peer:disconnect', (e) => this.peerEvent('disconnected', e.detail));
    node.addEventListener('connection:open', (e) => this.internet.connectionOpened(e.detail));
    node.addEventListener('connection:close', (e) => this.connectionClosed(e.detail));
    if (this.opts.mdns) node.addEventListener('peer:discovery', (e) => void this.discovered(e.detail));
    node.services.pubsub.addEventListener('message', (e) => this.onGossip(e.detail));
    try {
      await node.start();
    } catch (err) {
      this.state = 'stopped';
      await Promise.resolve(node.stop()).catch(() => undefined);
      throw new Error(`network: could not listen on ${this.listen.toString()}: ${(err as Error).message}`);
    }
    if (quic) await this.internet.listenQuic();
    for (const served of this.served.values()) await this.register(served);
    for (const topic of this.topics.names()) this.join(topic);
    this.bootstrapper.start();
    this.log.info({ peerId: node.peerId.toString(), addresses: this.addresses() }, 'network: listening');
  }

  /** Cancels every wait and exchange, stops redialing and closes every connection. */
  async stop(): Promise<void> {
    if (this.state !== 'started') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopped';
    this.stopper.abort(new Error('the network is stopping'));
    await this.bootstrapper.stop();
    await this.node?.stop();
  }

  subscribe(topic: string, handler: GossipHandler, admit?: GossipAdmission): () => void {
    const live = () => (this.node && this.state === 'started' ? this.node.services.pubsub : undefined);
    return this.topics.add(topic, handler, { joined: () => this.join(topic), left: () => (live()?.unsubscribe(topic), live()?.topicValidators.delete(topic)) }, admit);
  }

  /** Joins a topic's mesh, every message validated before it is delivered or forwarded (issue #37 item 7). */
  private join(topic: string): void {
    const pubsub = this.node && this.state === 'started' ? this.node.services.pubsub : undefined;
    if (!pubsub || !this.validator) return;
    pubsub.topicValidators.set(topic, this.validator);
    pubsub.subscribe(topic);
  }

  async publish(topic: string, data: Uint8Array): Promise<number> {
    if (data.byteLength > MAX_GOSSIP_BYTES) throw new PeerNetworkError('too_large', `gossip message of ${data.byteLength} bytes exceeds ${MAX_GOSSIP_BYTES}`);
    if (!this.node || this.state !== 'started') return 0;
    let recipients: PeerId[];
    try {
      ({ recipients } = await this.node.services.pubsub.publish(topic, data));
    } catch (err) {
      throw new PeerNetworkError('protocol', `publish on ${topic}: ${(err as Error).message}`);
    }
    this.counters.published(topic, data.byteLength);
    return recipients.length;
  }

  topicPeers(topic: string): PeerKey[] {
    if (!this.node || this.state !== 'started') return [];
    return keysOf(this.node.services.pubsub.getSubscribers(topic)).filter((k) => this.isConnected(k));
  }

  peers(): PeerKey[] {
    if (!this.node || this.state !== 'started') return [];
    return keysOf(this.node.getPeers());
  }

  peerCount(): number {
    return this.node && this.state === 'started' ? this.connected.size : 0;
  }

  addresses(): string[] {
    if (!this.node || this.state !== 'started') return [];
    // QUIC first: an invitation's addresses are dialed at once, and the dial started first is the one the others join
    return quicFirstAddresses(this.node.getMultiaddrs()).map(String);
  }

  keep(address: string): void {
    this.bootstrapper.add({ address, peer: bootstrapPeer(address) });
  }

  async dial(address: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<PeerKey> {
    const timer = deadline(opts.timeoutMs);
    const signal = AbortSignal.any([timer.signal, ...(opts.signal ? [opts.signal] : [])]);
    try {
      return await this.dialWith(address, signal, 'dial');
    } catch (err) {
      if (opts.signal?.aborted) throw new PeerNetworkError('aborted', `dial ${address}: aborted`);
      if (timer.signal.aborted) throw new PeerNetworkError('timeout', `dial ${address}: no connection within ${opts.timeoutMs} ms`);
      throw err;
    } finally {
      timer.clear();
    }
  }

  handle(protocol: string, handler: RequestHandler, opts: ProtocolOptions): void {
    if (this.served.has(protocol)) throw new Error(`protocol ${protocol} is already handled`);
    if (opts.maxRequestBytes > MAX_FRAME_BYTES) throw new Error(`${protocol}: maxRequestBytes past the frame bound of ${MAX_FRAME_BYTES}`);
    const served: Served = { protocol, handler, opts, inflight: new Map() };
    this.served.set(protocol, served);
    if (this.node && this.state === 'started') {
      this.register(served).catch((err: Error) => this.log.error({ protocol, err: err.message }, 'network: could not register a protocol'));
    }
  }

  async request(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array> {
    let first: Uint8Array | undefined;
    for await (const frame of this.requestStream(peer, protocol, data, opts)) {
      if (first) break; // one frame was asked for: the rest of the answer is dropped
      first = frame;
    }
    if (!first) throw new PeerNetworkError('protocol', `${protocol}: the peer answered nothing`);
    return first;
  }

  async *requestStream(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): AsyncIterable<Uint8Array> {
    let outcome: OutboundOutcome = 'ok';
    try {
      const node = this.node;
      if (!node || this.state !== 'started') throw new PeerNetworkError('unreachable', `${protocol}: the network is not started`);
      if (this.box.isBanned(peer)) throw new PeerNetworkError('unreachable', `${protocol}: peer ${peer} is banned`);
      let remote: PeerId;
      try {
        remote = peerIdOfKey(peer);
      } catch {
        throw new PeerNetworkError('unreachable', `${protocol}: not a peer key: ${peer}`);
      }
      const dial = (id: PeerId, p: string, signal: AbortSignal) => dialProtocolRetrying(node, id, p, signal);
      yield* requestFrames(this.exchangeHost, dial, peer, remote, protocol, data, opts);
    } catch (err) {
      outcome = err instanceof PeerNetworkError ? err.kind : 'protocol';
      throw err;
    } finally {
      this.counters.outbound(this.served.has(protocol) ? protocol : OTHER_PROTOCOL, outcome);
    }
  }

  onPeer(listener: (e: PeerEvent) => void): () => void {
    this.peerListeners.add(listener);
    return () => this.peerListeners.delete(listener);
  }

  penalize(peer: PeerKey, reason: PenaltyReason, detail?: string): void {
    this.log.debug({ peer, reason, detail }, 'network: peer penalized');
    if (!this.box.record(peer, reason)) return;
    this.log.info({ peer }, 'network: peer banned for sending garbage; disconnecting');
    const direct = (this.node?.getConnections().filter((c) => peerKeyOf(c.remotePeer) === peer && !isRelayed(c)) ?? []).map((c) => c.remoteAddr.toString());
    const addresses = this.addressBans.noteBan(peer, direct);
    this.disconnect(peer);
    if (addresses.length === 0) return;
    this.log.info({ addresses }, 'network: address banned: several identities from it were banned; disconnecting it');
    for (const c of this.node?.getConnections() ?? []) if (this.addressBans.denies(c.remoteAddr.toString())) c.abort(new Error('the address is banned'));
  }

  provide = (key: string, o?: { signal?: AbortSignal }): Promise<void> => this.content.provide(key, o);
  unprovide = (key: string): Promise<void> => this.content.unprovide(key);
  findProviders = (key: string, o: { timeoutMs: number; max: number; signal?: AbortSignal }): AsyncIterable<PeerKey> => this.content.findProviders(key, o);

  /** Drops every connection to the peer at once (a graceful close would wait on its streams). */
  private disconnect(peer: PeerKey): void {
    if (!this.node || this.state !== 'started') return;
    let id: PeerId;
    try {
      id = peerIdOfKey(peer);
    } catch {
      return; // not a peer key: no connection can be its
    }
    for (const conn of this.node.getConnections(id)) conn.abort(new Error('the peer is banned'));
  }

  status(): NetworkStatus {
    const node = this.state === 'started' ? this.node : undefined;
    const connections = (node?.getConnections() ?? []).flatMap((c) => {
      const peer = peerKeyOf(c.remotePeer);
      if (!peer) return [];
      return [{ peer, peerId: c.remotePeer.toString(), remoteAddress: c.remoteAddr.toString(), direction: c.direction, openedAt: c.timeline.open }];
    });
    return {
      peerKey: this.self,
      peerId: libp2pPeerIdOf(this.self),
      listenAddresses: node ? this.internet.listenAddresses() : [],
      externalAddresses: this.addresses(),
      connections,
      topics: this.topics.names().map((topic) => ({ topic, peers: this.topicPeers(topic).length, mesh: meshSize(node?.services.pubsub, topic) })),
      bytes: this.counters.bytes(),
      gossip: this.counters.gossip(),
      requests: this.counters.requests(),
      penalties: this.box.penalties(),
      banned: this.box.banned(),
      payload: this.payload.list(),
      ...(node ? { internet: this.internet.status(node) } : {}),
    };
  }

  private async register(served: Served): Promise<void> {
    const limit = served.opts.maxInboundPerPeer ?? DEFAULT_INBOUND_PER_PEER;
    // libp2p's own per-connection cap sits above ours, so a busy peer gets our refusal, not a reset
    await this.node!.handle(served.protocol, (stream, connection) => serveStream(this.exchangeHost, served, stream, connection), {
      maxInboundStreams: Math.max(32, limit * 4),
      maxOutboundStreams: MAX_STREAMS_PER_CONNECTION,
      runOnLimitedConnection: true,
    });
  }

  private connectionClosed(conn: Connection): void {
    this.stack?.regainGossipStream(this.node?.services.pubsub, conn.remotePeer, () => this.node?.getConnections(conn.remotePeer) ?? []);
    this.internet.connectionClosed(conn);
  }

  private async dialWith(address: string, signal: AbortSignal, what: string): Promise<PeerKey> {
    const node = this.node;
    if (!node || this.state !== 'started') throw new PeerNetworkError('unreachable', `${what} ${address}: the network is not started`);
    let target: Multiaddr;
    try {
      target = multiaddr(address);
    } catch {
      throw new PeerNetworkError('unreachable', `${what}: not a multiaddr: ${address}`);
    }
    if (!dialableHere(target)) throw new PeerNetworkError('unreachable', `${what} ${quicRequirement(address)}`);
    const named = bootstrapPeer(address);
    if (named && this.box.isBanned(named)) throw new PeerNetworkError('unreachable', `${what} ${address}: the peer is banned`);
    try {
      const conn = await node.dial(target, { signal: AbortSignal.any([signal, this.stopper.signal]) });
      const peer = peerKeyOf(conn.remotePeer);
      if (!peer) throw new Error('the peer is not an Ed25519 node key');
      return peer;
    } catch (err) {
      throw new PeerNetworkError('unreachable', `${what} ${address}: ${(err as Error).message}`);
    }
  }

  private isConnected(peer: PeerKey): boolean {
    if (!this.node || this.state !== 'started') return false;
    try {
      return this.node.getConnections(peerIdOfKey(peer)).length > 0;
    } catch {
      return false;
    }
  }

  private peerEvent(type: PeerEvent['type'], id: PeerId): void {
    const peer = peerKeyOf(id);
    if (!peer) return;
    // counted whatever follows: libp2p holds the connection until a ban's disconnect lands
    if (type === 'connected') this.connected.add(peer);
    else this.connected.delete(peer);
    if (type === 'connected') {
      if (this.box.isBanned(peer)) return this.disconnect(peer); // a ban that landed mid-upgrade
      // a dial-back probe's own short connection to a peer that has just left is no peer arriving
      if (this.internet.dialingBack.has(peer)) return;
      this.announced.add(peer);
    } else if (!this.announced.delete(peer)) {
      return; // its connection was never announced
    }
    for (const l of [...this.peerListeners]) {
      try {
        l({ type, peer });
      } catch (err) {
        this.log.error({ peer, err: (err as Error).message }, 'network: a peer listener threw');
      }
    }
  }

  private onGossip(msg: Message): void {
    if (msg.type !== 'signed') return; // StrictSign: gossipsub drops unsigned messages before this
    const from = peerKeyOf(msg.from);
    if (!from || !this.topics.has(msg.topic)) return;
    if (msg.data.byteLength > MAX_GOSSIP_BYTES) {
      // the RPC bound leaves room for framing, so a message can arrive past the message bound
      this.counters.gossipIn++;
      this.counters.gossipDropped++;
      this.penalize(from, 'invalid_message', `gossip message of ${msg.data.byteLength} bytes on ${msg.topic}`);
      return;
    }
    this.topics.deliver({ topic: msg.topic, from, data: msg.data });
  }

  private async discovered(info: PeerInfo): Promise<void> {
    const peer = peerKeyOf(info.id);
    if (!peer || this.isConnected(peer) || this.box.isBanned(peer) || !this.node) return;
    const timer = deadline(this.opts.discoveryDialTimeoutMs ?? 10_000);
    try {
      await this.node.dial(info.id, { signal: AbortSignal.any([timer.signal, this.stopper.signal]) });
      this.log.debug({ peer }, 'network: connected to a peer found by mDNS');
    } catch (err) {
      this.log.debug({ peer, err: (err as Error).message }, 'network: could not dial a peer found by mDNS');
    } finally {
      timer.clear();
    }
  }
}
