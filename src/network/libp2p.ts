/**
 * The node's `Network` over libp2p 3 (issue #12 §1; domain.md §1.1–§1.5): TCP, Noise, yamux,
 * identify, ping, gossipsub and optional mDNS, with the peer id derived from the node signing key.
 * Gossip and peer events map onto the contract here; request/response exchanges live in
 * exchange.ts, bootstrap redial in bootstrap.ts, bans in penalties.ts, traffic counting in
 * traffic.ts. Nothing outside `src/network/` imports libp2p. docs/network.md describes the whole.
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
import { noise } from '@chainsafe/libp2p-noise';
import type { CircuitRelayService } from '@libp2p/circuit-relay-v2';
import type { KadDHT } from '@libp2p/kad-dht';
import { yamux } from '@chainsafe/libp2p-yamux';
import type { GossipSub, Message } from '@libp2p/gossipsub';
import { gossipService, gossipValidator, meshSize, regainGossipStream } from './gossip-service.ts';
import { AddressBans } from './address-bans.ts';
import { identify } from '@libp2p/identify';
import type { Connection, Libp2p, PeerId, PeerInfo } from '@libp2p/interface';
import { mdns } from '@libp2p/mdns';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import type { Logger } from 'pino';
import { Bootstrapper, DEFAULT_REDIAL, type RedialPolicy } from './bootstrap.ts';
import {
  DEFAULT_INBOUND_PER_PEER,
  MAX_FRAME_BYTES,
  MAX_GOSSIP_BYTES,
  NetworkError,
  type GossipAdmission,
  type GossipHandler,
  type Network,
  type NetworkStatus,
  type OutboundOutcome,
  type PeerEvent,
  type PeerKey,
  type PenaltyReason,
  type InternetStatus,
  type ProtocolOptions,
  type RequestHandler,
  type RequestOptions,
} from './contract.ts';
import { NetworkCounters, OTHER_PROTOCOL } from './counters.ts';
import { deadline } from './deadline.ts';
import { requestFrames, serveStream, type ExchangeHost, type Served } from './exchange.ts';
import { bootstrapPeer, keysOf, libp2pPeerIdOf, libp2pPrivateKey, peerIdOfKey, peerKeyOf } from './peer-id.ts';
import { publicKeyOf } from '../crypto/keys.ts';
import { DEFAULT_BAN_POLICY, PenaltyBox, type BanPolicy } from './penalties.ts';
import { TopicHandlers } from './topics.ts';
import { STREAM_WINDOW_BYTES } from './stream-io.ts';
import { trafficMuxer } from './traffic.ts';
import { ReachabilityProbe, type Reachability } from './reachability.ts';
import { DirectUpgrades } from './upgrades.ts';
import { DhtContentRouting } from './content-routing.ts';
import { dialProtocolRetrying } from './dial-retry.ts';
import { checkPeerAddresses, dialableHere, loadQuicTransport, quicFirstAddresses, quicFirstSorter, quicListenAddress, quicPortOf, quicRequirement } from './quic.ts';
import { boundedRelayTransport, boundListenAddress, DEFAULT_INTERNET, DHT_PROTOCOL, directRemoteOf, internetServices, isRelayed, ProvedAddress, RelayedAllowance, RelayGuard, relaysHeld, tcpPortsOf, type InternetComponents, type InternetOptions } from './internet.ts';

/** how long one address of a peer may take to connect before libp2p tries its next one */
export const ADDRESS_DIAL_TIMEOUT_MS = 2_000;

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

/** yamux streams per connection (domain.md §1.1: 256, as the reference). */
const MAX_STREAMS_PER_CONNECTION = 256;

/** A libp2p network, not yet started. Throws on an invalid key, host or bootstrap address. */
export function createLibp2pNetwork(opts: Libp2pNetworkOptions): Libp2pNetwork {
  return new Libp2pNetwork(opts);
}

export class Libp2pNetwork implements Network {
  readonly self: PeerKey;
  private node: Libp2p<{ pubsub: GossipSub; relay?: CircuitRelayService; dht?: KadDHT }> | undefined;
  private readonly internet: InternetOptions;
  private readonly upgrades = new DirectUpgrades(Date.now);
  private readonly relayGuard = new RelayGuard((peer, detail) => this.penalize(peer, 'relay_abuse', detail));
  private readonly reach: ReachabilityProbe;
  /** relayed addresses of this node, with when each was first seen */
  private readonly relayedSince = new Map<string, number>();
  /** libp2p's transport and address managers (handed over by a pseudo-service): `/p2p-circuit` later, the proved address */
  private components: InternetComponents | undefined;
  private readonly proved = new ProvedAddress();
  private readonly allowance = new RelayedAllowance(); // a relayed connection spent at its limit is progress (bootstrap.ts)
  /** whether this node has asked for a relay reservation (once, when it learnt it is private) */
  private seekingRelay = false;
  /** peers this node is dialing back for their reachability probe (their connect is not announced) */
  private readonly dialingBack = new Set<PeerKey>();
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
    this.internet = { ...DEFAULT_INTERNET, ...opts.internet };
    const live = () => (this.state === 'started' ? this.node : undefined);
    this.content = new DhtContentRouting({ node: live, dht: this.internet.dht, self: this.self, stopping: this.stopper.signal });
    this.reach = new ReachabilityProbe({
      request: (peer, protocol, data, o) => this.request(peer, protocol, data, o),
      handle: (protocol, handler, o) => this.handle(protocol, handler, o),
      directRemote: (peer) => this.directRemote(peer),
      dialBack: (address, signal) => this.dialBack(address, signal),
      peerIdOf: (peer) => libp2pPeerIdOf(peer),
      listenPorts: () => this.tcpPorts(),
      now: Date.now,
      verdict: (v) => this.reachabilityChanged(v),
    });
    // served even with `autonat` off: a peer asking a protocol this node does not serve earns a
    // penalty, and answering costs at most four dials at once
    this.reach.start();
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
    const banned = (id: PeerId) => {
      const key = peerKeyOf(id);
      return key === undefined || this.box.isBanned(key); // peers are Ed25519 node keys, nothing else
    };
    const quic = await loadQuicTransport(this.log);
    const node = await createLibp2p({
      start: false,
      privateKey: libp2pPrivateKey(this.opts.privateKey),
      // no `/p2p-circuit` here: listening on it starts relay discovery, a DHT random walk (in bounded
      // rounds: relay-search.ts) while no relay is reserved; the node asks once it knows it is private
      addresses: { listen: [this.listen.toString()] },
      transports: [tcp(), ...(quic ? [quic] : []), ...(this.internet.relayClient ? [boundedRelayTransport({ reservationCompletionTimeout: 10_000 })] : [])],
      connectionEncrypters: [noise()],
      streamMuxers: [
        trafficMuxer(yamux({ maxInboundStreams: MAX_STREAMS_PER_CONNECTION, maxOutboundStreams: MAX_STREAMS_PER_CONNECTION, streamOptions: { maxStreamWindowSize: STREAM_WINDOW_BYTES } }), {
          bytesIn: (n) => (this.counters.bytesIn += n),
          bytesOut: (n) => (this.counters.bytesOut += n),
          serves: (protocol) => this.node?.getProtocols().includes(protocol) ?? false,
          unnegotiated: (streams, proposed) => {
            const conn = this.node?.getConnections().find((c) => c.streams === streams);
            const peer = conn && peerKeyOf(conn.remotePeer);
            if (peer) this.penalize(peer, 'unknown_protocol', `proposed ${proposed.slice(0, 4).join(', ')}`.slice(0, 256));
          },
        }),
      ],
      connectionGater: {
        denyInboundConnection: (conn) => this.addressBans.denies(conn.remoteAddr.toString()),
        denyDialPeer: banned,
        denyInboundEncryptedConnection: banned,
        denyOutboundEncryptedConnection: banned,
        // checked again once upgraded: a ban may land while a connection is being upgraded
        denyInboundUpgradedConnection: banned,
        denyOutboundUpgradedConnection: banned,
      },
      // addressDialTimeout: libp2p dials a peer's addresses one after another, relayed ones last, and
      // merges concurrent dials to one peer; an invitation's LAN address of a home behind NAT hangs
      // (no answer at all), and at libp2p's 6 s per address the relayed one is never reached
      // within a 5 s join dial (the NAT lab, test/e2e/nat-relay.e2e.test.ts)
      // addressSorter: a peer that offers QUIC and TCP is reached over QUIC (quic.ts)
      connectionManager: { maxConnections: 1024, reconnectRetries: 0, addressDialTimeout: ADDRESS_DIAL_TIMEOUT_MS, addressSorter: quicFirstSorter },
      peerDiscovery: this.opts.mdns ? [mdns({ interval: this.opts.mdnsIntervalMs ?? 10_000 })] : [],
      services: {
        identify: identify(),
        // two outbound pings a connection (libp2p: 1; a peer takes 2 inbound): libp2p's connection
        // monitor pings each connection every 10 s and aborts it when its ping cannot open, and the
        // DHT pings a new contact on the same protocol; on a fresh connection the two met ("Too many
        // outbound protocol streams … 2/1") and the connection went, a dial-back probe on it with it
        // (test/e2e/nat-quic.e2e.test.ts; docs/network.md "QUIC")
        ping: ping({ maxOutboundStreams: 2 }),
        ...internetServices(this.internet, (c) => (this.components = c), this.relayGuard),
        pubsub: gossipService(),
      },
    });
    this.node = node;
    node.addEventListener('peer:connect', (e) => this.peerEvent('connected', e.detail));
    node.addEventListener('peer:disconnect', (e) => this.peerEvent('disconnected', e.detail));
    node.addEventListener('connection:open', (e) => this.connectionOpened(e.detail));
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
    if (quic) await this.listenQuic();
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
    pubsub?.topicValidators.set(topic, this.validator);
    pubsub?.subscribe(topic);
  }

  private readonly validator = gossipValidator((topic, from) => this.topics.admits(topic, from), (peer, reason, detail) => this.penalize(peer, reason, detail));

  async publish(topic: string, data: Uint8Array): Promise<number> {
    if (data.byteLength > MAX_GOSSIP_BYTES) throw new NetworkError('too_large', `gossip message of ${data.byteLength} bytes exceeds ${MAX_GOSSIP_BYTES}`);
    if (!this.node || this.state !== 'started') return 0;
    let recipients: PeerId[];
    try {
      ({ recipients } = await this.node.services.pubsub.publish(topic, data));
    } catch (err) {
      throw new NetworkError('protocol', `publish on ${topic}: ${(err as Error).message}`);
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
      if (opts.signal?.aborted) throw new NetworkError('aborted', `dial ${address}: aborted`);
      if (timer.signal.aborted) throw new NetworkError('timeout', `dial ${address}: no connection within ${opts.timeoutMs} ms`);
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
    if (!first) throw new NetworkError('protocol', `${protocol}: the peer answered nothing`);
    return first;
  }

  async *requestStream(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): AsyncIterable<Uint8Array> {
    let outcome: OutboundOutcome = 'ok';
    try {
      const node = this.node;
      if (!node || this.state !== 'started') throw new NetworkError('unreachable', `${protocol}: the network is not started`);
      if (this.box.isBanned(peer)) throw new NetworkError('unreachable', `${protocol}: peer ${peer} is banned`);
      let remote: PeerId;
      try {
        remote = peerIdOfKey(peer);
      } catch {
        throw new NetworkError('unreachable', `${protocol}: not a peer key: ${peer}`);
      }
      const dial = (id: PeerId, p: string, signal: AbortSignal) => dialProtocolRetrying(node, id, p, signal);
      yield* requestFrames(this.exchangeHost, dial, peer, remote, protocol, data, opts);
    } catch (err) {
      outcome = err instanceof NetworkError ? err.kind : 'protocol';
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
      listenAddresses: node ? this.listenAddresses() : [],
      externalAddresses: this.addresses(),
      connections,
      topics: this.topics.names().map((topic) => ({ topic, peers: this.topicPeers(topic).length, mesh: meshSize(node?.services.pubsub, topic) })),
      bytes: this.counters.bytes(),
      gossip: this.counters.gossip(),
      requests: this.counters.requests(),
      penalties: this.box.penalties(),
      banned: this.box.banned(),
      payload: this.payload.list(),
      ...(node ? { internet: this.internetStatus(node) } : {}),
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

  private internetStatus(node: Libp2p<{ relay?: CircuitRelayService; dht?: KadDHT }>): InternetStatus {
    const relays = relaysHeld(node.getMultiaddrs().map(String), this.relayedSince, Date.now());
    const relay = node.services.relay;
    const dht = node.services.dht as (KadDHT & { routingTable?: { size: number } }) | undefined;
    return {
      relays,
      ...(relay ? { relayServer: { reservations: relay.reservations.size, maxReservations: this.internet.relayMaxReservations }, relayGuard: this.relayGuard.status() } : {}),
      directUpgrades: this.upgrades.list(),
      upgradeCounts: this.upgrades.counts(),
      autonat: this.reach.status(),
      ...(dht ? { dht: { routingTableSize: dht.routingTable?.size ?? 0, protocol: DHT_PROTOCOL } } : {}),
    };
  }

  /**
   * A private node reserves a slot on a relay: listening on `/p2p-circuit` makes the relay transport
   * reserve on a connected relay, else on relays in the peer store, else on relays a DHT random walk
   * finds. A public node needs none (peers dial it), so it never starts that search; it advertises
   * the address a peer dialed it back at (internet.ts, ProvedAddress).
   */
  private reachabilityChanged(v: Reachability): void {
    this.proved.update(this.components, v, this.reach.status());
    if (v !== 'private' || this.seekingRelay || !this.internet.relayClient || !this.components || this.state !== 'started') return;
    this.seekingRelay = true;
    this.log.info('network: not reachable from outside; reserving a slot on a relay');
    this.components.transportManager.listen([multiaddr('/p2p-circuit')]).catch((err: Error) => {
      this.seekingRelay = false;
      this.log.warn({ err: err.message }, 'network: could not listen through relays');
    });
  }

  private connectionOpened(conn: Connection): void {
    const peerId = conn.remotePeer.toString();
    this.allowance.opened(conn);
    if (isRelayed(conn)) this.upgrades.relayedOpened(peerId, conn.id, directRemoteOf(this.node?.getConnections(conn.remotePeer) ?? []) !== undefined);
    else this.upgrades.directOpened(peerId, conn.id);
    const peer = peerKeyOf(conn.remotePeer);
    // the probe asks a peer that dialed in only while this node has no verdict (a node nobody dials,
    // as a relay, has no other peers), and after this event's other listeners: libp2p's connection manager lists the connection in
    // its own listener, registered after ours, and the probe reads it from there
    if (!peer || !this.internet.autonat || isRelayed(conn)) return;
    if (conn.direction === 'outbound') this.reach.onConnected(peer);
    else if (this.reach.status().reachability === 'unknown') queueMicrotask(() => this.reach.onConnected(peer));
  }

  private connectionClosed(conn: Connection): void {
    regainGossipStream(this.node?.services.pubsub, conn.remotePeer, () => this.node?.getConnections(conn.remotePeer) ?? []);
    if (!isRelayed(conn)) return;
    if (this.allowance.spent(conn)) this.bootstrapper.progressed(peerKeyOf(conn.remotePeer));
    const stillRelayed = this.node?.getConnections(conn.remotePeer).some((c) => c !== conn && isRelayed(c)) ?? false;
    if (!stillRelayed) this.upgrades.relayedClosed(conn.remotePeer.toString());
  }

  /** The remote IP of a direct connection to `peer`, for the dial-back probe. */
  private directRemote(peer: PeerKey): { ip: string; family: 4 | 6 } | undefined {
    if (!this.node || this.state !== 'started') return undefined;
    let id: PeerId;
    try {
      id = peerIdOfKey(peer);
    } catch {
      return undefined;
    }
    return directRemoteOf(this.node.getConnections(id));
  }

  /** Dials `address` on a connection of its own (never an existing one), then closes it. */
  private async dialBack(address: string, signal: AbortSignal): Promise<PeerKey> {
    const node = this.node;
    if (!node || this.state !== 'started') throw new NetworkError('unreachable', 'the network is not started');
    const target = bootstrapPeer(address);
    if (target) this.dialingBack.add(target);
    const done = () => target && this.dialingBack.delete(target);
    let conn: Connection;
    try {
      conn = await node.dial(multiaddr(address), { signal: AbortSignal.any([signal, this.stopper.signal]), force: true });
    } catch (err) {
      done();
      throw err;
    }
    const peer = peerKeyOf(conn.remotePeer);
    // forgotten once closed: the peer:connect this connection may raise lands before that
    void conn.close().catch(() => undefined).finally(done);
    if (!peer) throw new NetworkError('unreachable', 'the peer is not an Ed25519 node key');
    return peer;
  }

  /**
   * QUIC on the UDP port of the same number as the bound TCP port (the reference's layout; with
   * port 0 that is the port TCP was given). A UDP port that is taken costs QUIC, not the node.
   */
  private async listenQuic(): Promise<void> {
    const port = this.tcpPorts()[0];
    if (port === undefined || !this.components) return;
    const address = quicListenAddress(this.listen, port);
    try {
      await this.components.transportManager.listen([address]);
    } catch (err) {
      this.log.warn({ address: address.toString(), err: (err as Error).message }, 'network: could not listen over QUIC; carrying on over TCP');
    }
  }

  /** The configured host with the bound ports: TCP, and QUIC where it listens. */
  private listenAddresses(): string[] {
    const bound = this.components?.transportManager.getAddrs() ?? [];
    const quic = quicPortOf(bound);
    return [...boundListenAddress(this.listen, bound), ...(quic === undefined ? [] : [quicListenAddress(this.listen, quic).toString()])];
  }

  /** The TCP ports this node listens on. */
  private tcpPorts(): number[] {
    return tcpPortsOf(this.components?.transportManager.getAddrs() ?? []); // not getMultiaddrs(): a public address is unverified until proved
  }

  private async dialWith(address: string, signal: AbortSignal, what: string): Promise<PeerKey> {
    const node = this.node;
    if (!node || this.state !== 'started') throw new NetworkError('unreachable', `${what} ${address}: the network is not started`);
    let target: Multiaddr;
    try {
      target = multiaddr(address);
    } catch {
      throw new NetworkError('unreachable', `${what}: not a multiaddr: ${address}`);
    }
    if (!dialableHere(target)) throw new NetworkError('unreachable', `${what} ${quicRequirement(address)}`);
    const named = bootstrapPeer(address);
    if (named && this.box.isBanned(named)) throw new NetworkError('unreachable', `${what} ${address}: the peer is banned`);
    try {
      const conn = await node.dial(target, { signal: AbortSignal.any([signal, this.stopper.signal]) });
      const peer = peerKeyOf(conn.remotePeer);
      if (!peer) throw new Error('the peer is not an Ed25519 node key');
      return peer;
    } catch (err) {
      throw new NetworkError('unreachable', `${what} ${address}: ${(err as Error).message}`);
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
      if (this.dialingBack.has(peer)) return;
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
