/**
 * The relay's guard (issue #24 "Security": relayed traffic counted and bounded, a peer abusing a
 * relay penalised like any hostile peer; docs/network.md "Relay limits and abuse").
 *
 * libp2p's circuit relay server enforces the per-circuit limits (`relay_data_limit_bytes`, both
 * directions together, and `relay_duration_limit_secs`: past either it aborts both halves of the
 * circuit) and the reservation count. It does not count per peer, nor stop one peer from asking
 * for reservations or circuits in a loop. This guard sits between the relay server and libp2p's
 * components (the relay asks the connection gater before every reservation and circuit, and
 * registers its hop protocol handler through the registrar), so it needs no change to libp2p:
 *
 * - every hop stream (a reservation or a circuit's source half) has its bytes counted, both ways;
 * - reservation requests and circuits are counted per peer, within a sliding window; past the
 *   policy the request is refused (`PERMISSION_DENIED`) and the peer penalised with `relay_abuse`,
 *   which bans it through the penalties box like any other hostile input;
 * - a circuit's end is classified: cut by the data limit, by the duration limit, or closed;
 * - reservations are bounded per client address and per subnet (issue #37 item 5: fresh identities
 *   are free, addresses are not), refused past that with a penalty, and a reservation whose peer is
 *   no longer connected after a short grace is dropped (the relay cannot reach it through a
 *   reservation without a connection, and libp2p's relay server would hold it for its whole TTL).
 *
 * The relay never sees plaintext: a circuit carries the two peers' own Noise session (the relayed
 * connection is upgraded end to end, relay-guard.test.ts shows the bytes it forwards are
 * ciphertext), and sealed deltas are sealed above that. Memory is bounded: at most `MAX_PEERS`
 * peers are tracked, idle ones swept first.
 */
import './polyfill.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Connection, PeerId, Stream } from '@libp2p/interface';
import { isIPv4, isIPv6 } from 'node:net';
import type { PeerKey } from './peer-key.ts';
import { peerKeyOf } from './peer-id.ts';

/** libp2p's circuit relay v2 hop protocol (a reservation or the source half of a circuit) */
export const HOP_PROTOCOL = '/libp2p/circuit/relay/0.2.0/hop';

export interface RelayGuardPolicy {
  /** the sliding window the per-peer rates are counted in */
  windowMs: number;
  /** reservation requests one peer may make within the window (a client refreshes one well below this) */
  maxReservationsPerWindow: number;
  /** circuits one peer may open through this relay within the window */
  maxCircuitsPerWindow: number;
  /** circuits one peer may hold open at once through this relay */
  maxOpenCircuits: number;
  /** reservations held at once by peers on one address (an IPv6 /64 counts as one address) */
  maxReservationsPerAddress: number;
  /** reservations held at once by peers in one subnet (IPv4 /24, IPv6 /48) */
  maxReservationsPerSubnet: number;
  /** how long a reservation outlives its peer's last connection (or is kept unconnected after it was made) */
  reservationGraceMs: number;
}

/** docs/network.md "Relay limits and abuse"; decisions.md records why these figures */
export const DEFAULT_RELAY_GUARD: RelayGuardPolicy = {
  windowMs: 60_000,
  maxReservationsPerWindow: 10,
  maxCircuitsPerWindow: 60,
  maxOpenCircuits: 16,
  maxReservationsPerAddress: 8,
  maxReservationsPerSubnet: 32,
  reservationGraceMs: 5_000,
};

/** peers tracked at most; idle peers (nothing open, nothing in the window) are swept past it */
const MAX_PEERS = 4096;

/** how a circuit ended (closed set: a metrics label) */
export type CircuitEnd = 'data_limit' | 'duration_limit' | 'closed';

export interface RelayGuardStatus {
  /** denied: past the per-peer rate or the per-address and per-subnet bounds; dropped: the peer left */
  reservations: { accepted: number; denied: number; dropped: number };
  circuits: { opened: number; denied: number; open: number };
  /** circuits ended, by how */
  ended: Record<CircuitEnd, number>;
  /** bytes through hop streams, into the relay from sources and out of it to them */
  bytes: { in: number; out: number };
  /** peers currently tracked */
  peers: number;
}

interface PeerRecord {
  reservations: number[];
  circuits: number[];
  open: number;
  bytes: number;
}

/** the relay server's reservations, as libp2p's relay server holds them (a PeerMap) */
export interface HeldReservations {
  get(peer: PeerId): { addr: { toString(): string } } | undefined;
  delete(peer: PeerId): void;
  entries(): IterableIterator<[PeerId, { addr: { toString(): string } }]>;
}

/** the parts of libp2p's components the relay server reads that the guard stands in front of */
interface GuardedComponents {
  events?: { addEventListener(type: 'peer:disconnect', listener: (e: CustomEvent<PeerId>) => void): void };
  connectionManager?: { getConnections(peer: PeerId): unknown[] };
  connectionGater: {
    denyInboundRelayReservation?(source: PeerId): boolean | Promise<boolean>;
    denyOutboundRelayedConnection?(source: PeerId, destination: PeerId): boolean | Promise<boolean>;
  };
  registrar: { handle(protocol: string, handler: (stream: Stream, connection: Connection) => void | Promise<void>, opts?: unknown): Promise<void> };
}

export class RelayGuard {
  private readonly peers = new Map<PeerKey, PeerRecord>();
  private readonly hop = new AsyncLocalStorage<{ stream: Stream; connection: Connection }>();
  /** the relay server's reservations and libp2p's connections (`serve`, `wrap`) */
  private held?: HeldReservations;
  private connections?: GuardedComponents['connectionManager'];
  private readonly totals: RelayGuardStatus = {
    reservations: { accepted: 0, denied: 0, dropped: 0 },
    circuits: { opened: 0, denied: 0, open: 0 },
    ended: { data_limit: 0, duration_limit: 0, closed: 0 },
    bytes: { in: 0, out: 0 },
    peers: 0,
  };

  constructor(
    /** a penalty for `peer` (the network's `penalize(peer, 'relay_abuse', detail)`) */
    private readonly penalize: (peer: PeerKey, detail: string) => void,
    private readonly policy: RelayGuardPolicy = DEFAULT_RELAY_GUARD,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether a reservation request from `peer`, connected from `remote` (a multiaddr) when known, is
   * refused (counted; refused past the policy, with a penalty).
   */
  denyReservation(peer: PeerKey | undefined, remote?: string, others: Iterable<[string, string]> = []): boolean {
    if (!peer) return true; // peers are Ed25519 node keys, nothing else
    const rec = this.record(peer);
    rec.reservations = this.recent(rec.reservations);
    let why: string | undefined;
    if (rec.reservations.length >= this.policy.maxReservationsPerWindow) why = `more than ${this.policy.maxReservationsPerWindow} relay reservation requests within ${this.policy.windowMs} ms`;
    else why = this.crowded(peer, remote, others);
    if (why) {
      this.totals.reservations.denied++;
      this.penalize(peer, why);
      return true;
    }
    rec.reservations.push(this.now());
    this.totals.reservations.accepted++;
    return false;
  }

  /**
   * Why a reservation from `remote` would crowd out others: its address or subnet already holds its
   * share of the reservations (`others`: the peers holding one, with the address each reserved from).
   */
  private crowded(peer: PeerKey, remote: string | undefined, others: Iterable<[string, string]>): string | undefined {
    const mine = remote ? addressGroups(remote) : undefined;
    if (!mine) return undefined;
    let sameAddress = 0;
    let sameSubnet = 0;
    for (const [holder, addr] of others) {
      if (holder === peer) continue; // its own reservation, refreshed
      const g = addressGroups(addr);
      if (g?.subnet !== mine.subnet) continue;
      sameSubnet++;
      if (g.address === mine.address) sameAddress++;
    }
    if (sameAddress >= this.policy.maxReservationsPerAddress) return `address ${mine.address} already holds ${sameAddress} relay reservations`;
    if (sameSubnet >= this.policy.maxReservationsPerSubnet) return `subnet ${mine.subnet} already holds ${sameSubnet} relay reservations`;
    return undefined;
  }

  /** The relay server's reservations: the guard bounds them per address and drops those whose peer left. */
  serve(reservations: HeldReservations): void {
    this.held = reservations;
  }

  /** The reservations held, as (peer, address reserved from). */
  private *holders(): Iterable<[string, string]> {
    for (const [peer, r] of this.held?.entries() ?? []) {
      const key = peerKeyOf(peer);
      if (key) yield [key, r.addr.toString()];
    }
  }

  /**
   * After the grace, drops `peer`'s reservation when it holds no connection to this relay: called
   * when a reservation is made (its peer may have hung up already) and when a peer disconnects.
   */
  private checkLater(peer: PeerId): void {
    const timer = setTimeout(() => {
      const held = this.held?.get(peer);
      if (!held || (this.connections?.getConnections(peer).length ?? 1) > 0) return;
      // the relay server's expiry timer (not in its types) would fire in hours and delete whatever
      // reservation the peer holds then
      const expiry = (held as { signal?: { clear?(): void } }).signal;
      expiry?.clear?.();
      this.held!.delete(peer);
      this.totals.reservations.dropped++;
    }, this.policy.reservationGraceMs);
    timer.unref?.();
  }

  /**
   * Whether a circuit from `source` is refused (counted; refused past the policy, with a penalty).
   * An allowed circuit is watched through its hop stream `stream` (when known) until it ends.
   */
  denyCircuit(source: PeerKey | undefined, stream?: Stream): boolean {
    if (!source) return true;
    const rec = this.record(source);
    rec.circuits = this.recent(rec.circuits);
    let why: string | undefined;
    if (rec.open >= this.policy.maxOpenCircuits) why = `more than ${this.policy.maxOpenCircuits} relayed circuits open at once`;
    else if (rec.circuits.length >= this.policy.maxCircuitsPerWindow) why = `more than ${this.policy.maxCircuitsPerWindow} relayed circuits within ${this.policy.windowMs} ms`;
    if (why) {
      this.totals.circuits.denied++;
      this.penalize(source, why);
      return true;
    }
    const at = this.now();
    rec.circuits.push(at);
    this.totals.circuits.opened++;
    if (stream) {
      rec.open++;
      this.totals.circuits.open++;
      stream.addEventListener('close', (e) => this.circuitEnded(rec, at, (e as Event & { error?: Error }).error), { once: true });
    }
    return false;
  }

  /** Counts a hop stream's bytes both ways, against the peer it came from. */
  watchHop(stream: Stream, peer: PeerKey | undefined): void {
    const rec = peer ? this.record(peer) : undefined;
    stream.addEventListener('message', (e) => {
      const n = (e as Event & { data: { byteLength: number } }).data.byteLength;
      this.totals.bytes.in += n;
      if (rec) rec.bytes += n;
    });
    // the relay writes to the source through `send`: an own property shadows the method for this stream
    const send = stream.send.bind(stream);
    stream.send = ((data: { byteLength: number }) => {
      this.totals.bytes.out += data.byteLength;
      if (rec) rec.bytes += data.byteLength;
      return send(data as never);
    }) as typeof stream.send;
  }

  /**
   * libp2p's components as the relay server should see them: the gater asks this guard first, and
   * the hop handler counts its stream and runs in a context that names it (so the gater's circuit
   * check, called inside, watches the right stream).
   */
  wrap<C extends object>(components: C): C {
    const c = components as unknown as GuardedComponents;
    const gater: GuardedComponents['connectionGater'] = {
      denyInboundRelayReservation: async (source) => {
        const denied = this.denyReservation(peerKeyOf(source), this.hop.getStore()?.connection.remoteAddr.toString(), this.holders()) || ((await c.connectionGater.denyInboundRelayReservation?.(source)) ?? false);
        if (!denied) this.checkLater(source);
        return denied;
      },
      denyOutboundRelayedConnection: async (source, destination) =>
        ((await c.connectionGater.denyOutboundRelayedConnection?.(source, destination)) ?? false) || this.denyCircuit(peerKeyOf(source), this.hop.getStore()?.stream),
    };
    this.connections = c.connectionManager;
    c.events?.addEventListener('peer:disconnect', (e) => {
      if (this.held?.get(e.detail)) this.checkLater(e.detail);
    });
    const registrar: GuardedComponents['registrar'] = {
      handle: (protocol, handler, opts) => {
        if (protocol !== HOP_PROTOCOL) return c.registrar.handle(protocol, handler, opts);
        return c.registrar.handle(
          protocol,
          (stream, connection) => {
            this.watchHop(stream, peerKeyOf(connection.remotePeer));
            return this.hop.run({ stream, connection }, () => handler(stream, connection));
          },
          opts,
        );
      },
    };
    const guardedRegistrar = new Proxy(c.registrar, { get: (t, k) => (k === 'handle' ? registrar.handle : Reflect.get(t, k)) });
    return new Proxy(components, {
      get: (target, k, receiver) => {
        if (k === 'connectionGater') return { ...c.connectionGater, ...gater };
        if (k === 'registrar') return guardedRegistrar;
        return Reflect.get(target, k, receiver);
      },
    });
  }

  status(): RelayGuardStatus {
    return {
      reservations: { ...this.totals.reservations },
      circuits: { ...this.totals.circuits },
      ended: { ...this.totals.ended },
      bytes: { ...this.totals.bytes },
      peers: this.peers.size,
    };
  }

  /** Bytes relayed for `peer` (through hop streams it opened) since it was first tracked. */
  bytesOf(peer: PeerKey): number {
    return this.peers.get(peer)?.bytes ?? 0;
  }

  private circuitEnded(rec: PeerRecord, openedAt: number, error: Error | undefined): void {
    rec.open--;
    this.totals.circuits.open--;
    const end: CircuitEnd = error?.name === 'TransferLimitError' ? 'data_limit' : error?.name === 'DurationLimitError' ? 'duration_limit' : 'closed';
    this.totals.ended[end]++;
    // a circuit this relay ended at its own limit does not count against the peer's rate: the
    // redial that follows is the expected way through a limited relay (an honest sync over a small
    // data limit opened more than 60 a minute and was penalised). Such a circuit cost the peer its
    // whole data or duration allowance, and the open-circuit bound still holds.
    if (end !== 'closed') {
      const i = rec.circuits.indexOf(openedAt);
      if (i >= 0) rec.circuits.splice(i, 1);
    }
  }

  private recent(times: number[]): number[] {
    const since = this.now() - this.policy.windowMs;
    return times[0] !== undefined && times[0] <= since ? times.filter((t) => t > since) : times;
  }

  private record(peer: PeerKey): PeerRecord {
    let rec = this.peers.get(peer);
    if (!rec) {
      if (this.peers.size >= MAX_PEERS) this.sweep();
      rec = { reservations: [], circuits: [], open: 0, bytes: 0 };
      this.peers.set(peer, rec);
    }
    return rec;
  }

  /** Forgets idle peers: nothing open and nothing within the window (their byte counts with them). */
  private sweep(): void {
    const since = this.now() - this.policy.windowMs;
    for (const [peer, rec] of this.peers) {
      const last = Math.max(rec.reservations.at(-1) ?? 0, rec.circuits.at(-1) ?? 0);
      if (rec.open === 0 && last <= since) this.peers.delete(peer);
    }
  }
}

/**
 * The groups a client address falls in, from a multiaddr: `address` (IPv4 exact, IPv6 its /64, a
 * site's usual allocation) and `subnet` (IPv4 /24, IPv6 /48). IPv4-mapped IPv6 counts as IPv4.
 */
export function addressGroups(multiaddr: string): { address: string; subnet: string } | undefined {
  const m = /^\/(ip4|ip6)\/([^/]+)/.exec(multiaddr);
  if (!m) return undefined;
  let ip = m[2]!;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  if (isIPv4(ip)) return { address: ip, subnet: `${ip.split('.').slice(0, 3).join('.')}.0/24` };
  if (!isIPv6(ip)) return undefined;
  const groups = expandIPv6(ip);
  return { address: `${groups.slice(0, 4).join(':')}::/64`, subnet: `${groups.slice(0, 3).join(':')}::/48` };
}

/** The eight 16-bit groups of an IPv6 address, as 4-digit hex. */
function expandIPv6(ip: string): string[] {
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const parts = (s: string | undefined) => (s ? s.split(':') : []);
  const h = parts(head);
  const t = tail === undefined ? [] : parts(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return all.map((g) => g.padStart(4, '0').toLowerCase());
}
