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
 * - a circuit's end is classified: cut by the data limit, by the duration limit, or closed.
 *
 * The relay never sees plaintext: a circuit carries the two peers' own Noise session (the relayed
 * connection is upgraded end to end, relay-guard.test.ts shows the bytes it forwards are
 * ciphertext), and sealed deltas are sealed above that. Memory is bounded: at most `MAX_PEERS`
 * peers are tracked, idle ones swept first.
 */
import './polyfill.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Connection, PeerId, Stream } from '@libp2p/interface';
import type { PeerKey } from './contract.ts';
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
}

/** docs/network.md "Relay limits and abuse"; decisions.md records why these figures */
export const DEFAULT_RELAY_GUARD: RelayGuardPolicy = { windowMs: 60_000, maxReservationsPerWindow: 10, maxCircuitsPerWindow: 60, maxOpenCircuits: 16 };

/** peers tracked at most; idle peers (nothing open, nothing in the window) are swept past it */
const MAX_PEERS = 4096;

/** how a circuit ended (closed set: a metrics label) */
export type CircuitEnd = 'data_limit' | 'duration_limit' | 'closed';

export interface RelayGuardStatus {
  reservations: { accepted: number; denied: number };
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

/** the parts of libp2p's components the relay server reads that the guard stands in front of */
interface GuardedComponents {
  connectionGater: {
    denyInboundRelayReservation?(source: PeerId): boolean | Promise<boolean>;
    denyOutboundRelayedConnection?(source: PeerId, destination: PeerId): boolean | Promise<boolean>;
  };
  registrar: { handle(protocol: string, handler: (stream: Stream, connection: Connection) => void | Promise<void>, opts?: unknown): Promise<void> };
}

export class RelayGuard {
  private readonly peers = new Map<PeerKey, PeerRecord>();
  private readonly hop = new AsyncLocalStorage<Stream>();
  private readonly totals: RelayGuardStatus = {
    reservations: { accepted: 0, denied: 0 },
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

  /** Whether a reservation request from `peer` is refused (counted; refused past the policy, with a penalty). */
  denyReservation(peer: PeerKey | undefined): boolean {
    if (!peer) return true; // peers are Ed25519 node keys, nothing else
    const rec = this.record(peer);
    rec.reservations = this.recent(rec.reservations);
    if (rec.reservations.length >= this.policy.maxReservationsPerWindow) {
      this.totals.reservations.denied++;
      this.penalize(peer, `more than ${this.policy.maxReservationsPerWindow} relay reservation requests within ${this.policy.windowMs} ms`);
      return true;
    }
    rec.reservations.push(this.now());
    this.totals.reservations.accepted++;
    return false;
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
      denyInboundRelayReservation: async (source) => this.denyReservation(peerKeyOf(source)) || ((await c.connectionGater.denyInboundRelayReservation?.(source)) ?? false),
      denyOutboundRelayedConnection: async (source, destination) =>
        ((await c.connectionGater.denyOutboundRelayedConnection?.(source, destination)) ?? false) || this.denyCircuit(peerKeyOf(source), this.hop.getStore()),
    };
    const registrar: GuardedComponents['registrar'] = {
      handle: (protocol, handler, opts) => {
        if (protocol !== HOP_PROTOCOL) return c.registrar.handle(protocol, handler, opts);
        return c.registrar.handle(
          protocol,
          (stream, connection) => {
            this.watchHop(stream, peerKeyOf(connection.remotePeer));
            return this.hop.run(stream, () => handler(stream, connection));
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
