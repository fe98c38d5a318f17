/**
 * The internet half of `Libp2pNetwork` (libp2p.ts; issue #24, docs/network.md "Across the
 * internet"): the reachability probe and what its verdict starts (a relay reservation, the proved
 * address), direct upgrades of relayed connections, the relay guard, the QUIC listen address, and
 * the internet part of the status. The adapter forwards libp2p's connection events here; the
 * pieces themselves live in internet.ts, reachability.ts, upgrades.ts, relay-guard.ts and quic.ts.
 */
import './polyfill.ts';
import type { Connection, PeerId } from '@libp2p/interface';
import type { KadDHT } from '@libp2p/kad-dht';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import type { Logger } from 'pino';
import { PeerNetworkError, type InternetStatus, type Network, type PeerKey, type PenaltyReason } from './network-port.ts';
import { boundListenAddress, DHT_PROTOCOL, directRemoteOf, isRelayed, ProvedAddress, RelayedAllowance, RelayGuard, relaysHeld, tcpPortsOf, type InternetComponents, type InternetOptions } from './internet.ts';
import type { Libp2pNode } from './libp2p-node.ts';
import { bootstrapPeer, libp2pPeerIdOf, peerIdOfKey, peerKeyOf } from './peer-id.ts';
import { quicListenAddress, quicPortOf } from './quic.ts';
import { ReachabilityProbe, type Reachability } from './reachability.ts';
import { DirectUpgrades } from './upgrades.ts';

/** What the internet half asks of the adapter. */
export interface InternetHost {
  options: InternetOptions;
  log: Logger;
  /** the TCP listen address as configured */
  listen: Multiaddr;
  /** the libp2p node once created (it stays after stop) */
  node(): Libp2pNode | undefined;
  started(): boolean;
  stopping: AbortSignal;
  penalize(peer: PeerKey, reason: PenaltyReason, detail?: string): void;
  request: Network['request'];
  handle: Network['handle'];
  /** a relayed connection spent at its limit is progress for the bootstrap redial (bootstrap.ts) */
  progressed(peer: PeerKey | undefined): void;
}

export class Libp2pInternet {
  readonly options: InternetOptions;
  private readonly upgrades = new DirectUpgrades(Date.now);
  readonly relayGuard: RelayGuard;
  private readonly reach: ReachabilityProbe;
  /** relayed addresses of this node, with when each was first seen */
  private readonly relayedSince = new Map<string, number>();
  /** libp2p's transport and address managers (handed over by a pseudo-service): `/p2p-circuit` later, the proved address */
  components: InternetComponents | undefined;
  private readonly proved = new ProvedAddress();
  private readonly allowance = new RelayedAllowance(); // a relayed connection spent at its limit is progress (bootstrap.ts)
  /** whether this node has asked for a relay reservation (once, when it learnt it is private) */
  private seekingRelay = false;
  /** peers this node is dialing back for their reachability probe (their connect is not announced) */
  readonly dialingBack = new Set<PeerKey>();

  constructor(private readonly host: InternetHost) {
    this.options = host.options;
    this.relayGuard = new RelayGuard((peer, detail) => host.penalize(peer, 'relay_abuse', detail));
    this.reach = new ReachabilityProbe({
      request: (peer, protocol, data, o) => host.request(peer, protocol, data, o),
      handle: (protocol, handler, o) => host.handle(protocol, handler, o),
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
  }

  status(node: Libp2pNode): InternetStatus {
    const relays = relaysHeld(node.getMultiaddrs().map(String), this.relayedSince, Date.now());
    const relay = node.services.relay;
    const dht = node.services.dht as (KadDHT & { routingTable?: { size: number } }) | undefined;
    return {
      relays,
      ...(relay ? { relayServer: { reservations: relay.reservations.size, maxReservations: this.options.relayMaxReservations }, relayGuard: this.relayGuard.status() } : {}),
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
    if (v !== 'private' || this.seekingRelay || !this.options.relayClient || !this.components || !this.host.started()) return;
    this.seekingRelay = true;
    this.host.log.info('network: not reachable from outside; reserving a slot on a relay');
    this.components.transportManager.listen([multiaddr('/p2p-circuit')]).catch((err: Error) => {
      this.seekingRelay = false;
      this.host.log.warn({ err: err.message }, 'network: could not listen through relays');
    });
  }

  connectionOpened(conn: Connection): void {
    const peerId = conn.remotePeer.toString();
    this.allowance.opened(conn);
    if (isRelayed(conn)) this.upgrades.relayedOpened(peerId, conn.id, directRemoteOf(this.host.node()?.getConnections(conn.remotePeer) ?? []) !== undefined);
    else this.upgrades.directOpened(peerId, conn.id);
    const peer = peerKeyOf(conn.remotePeer);
    // the probe asks a peer that dialed in only while this node has no verdict (a node nobody dials,
    // as a relay, has no other peers), and after this event's other listeners: libp2p's connection manager lists the connection in
    // its own listener, registered after ours, and the probe reads it from there
    if (!peer || !this.options.autonat || isRelayed(conn)) return;
    if (conn.direction === 'outbound') this.reach.onConnected(peer);
    else if (this.reach.status().reachability === 'unknown') queueMicrotask(() => this.reach.onConnected(peer));
  }

  /** A connection closed (after the adapter's own handling of it). */
  connectionClosed(conn: Connection): void {
    if (!isRelayed(conn)) return;
    if (this.allowance.spent(conn)) this.host.progressed(peerKeyOf(conn.remotePeer));
    const stillRelayed = this.host.node()?.getConnections(conn.remotePeer).some((c) => c !== conn && isRelayed(c)) ?? false;
    if (!stillRelayed) this.upgrades.relayedClosed(conn.remotePeer.toString());
  }

  /** The remote IP of a direct connection to `peer`, for the dial-back probe. */
  private directRemote(peer: PeerKey): { ip: string; family: 4 | 6 } | undefined {
    const node = this.host.node();
    if (!node || !this.host.started()) return undefined;
    let id: PeerId;
    try {
      id = peerIdOfKey(peer);
    } catch {
      return undefined;
    }
    return directRemoteOf(node.getConnections(id));
  }

  /** Dials `address` on a connection of its own (never an existing one), then closes it. */
  private async dialBack(address: string, signal: AbortSignal): Promise<PeerKey> {
    const node = this.host.node();
    if (!node || !this.host.started()) throw new PeerNetworkError('unreachable', 'the network is not started');
    const target = bootstrapPeer(address);
    if (target) this.dialingBack.add(target);
    const done = () => target && this.dialingBack.delete(target);
    let conn: Connection;
    try {
      conn = await node.dial(multiaddr(address), { signal: AbortSignal.any([signal, this.host.stopping]), force: true });
    } catch (err) {
      done();
      throw err;
    }
    const peer = peerKeyOf(conn.remotePeer);
    // forgotten once closed: the peer:connect this connection may raise lands before that
    void conn.close().catch(() => undefined).finally(done);
    if (!peer) throw new PeerNetworkError('unreachable', 'the peer is not an Ed25519 node key');
    return peer;
  }

  /**
   * QUIC on the UDP port of the same number as the bound TCP port (the reference's layout; with
   * port 0 that is the port TCP was given). A UDP port that is taken costs QUIC, not the node.
   */
  async listenQuic(): Promise<void> {
    const port = this.tcpPorts()[0];
    if (port === undefined || !this.components) return;
    const address = quicListenAddress(this.host.listen, port);
    try {
      await this.components.transportManager.listen([address]);
    } catch (err) {
      this.host.log.warn({ address: address.toString(), err: (err as Error).message }, 'network: could not listen over QUIC; carrying on over TCP');
    }
  }

  /** The configured host with the bound ports: TCP, and QUIC where it listens. */
  listenAddresses(): string[] {
    const bound = this.components?.transportManager.getAddrs() ?? [];
    const quic = quicPortOf(bound);
    return [...boundListenAddress(this.host.listen, bound), ...(quic === undefined ? [] : [quicListenAddress(this.host.listen, quic).toString()])];
  }

  /** The TCP ports this node listens on. */
  private tcpPorts(): number[] {
    return tcpPortsOf(this.components?.transportManager.getAddrs() ?? []); // not getMultiaddrs(): a public address is unverified until proved
  }
}
