/**
 * The internet half of the libp2p network (issue #24; docs/network.md "Across the internet"): the
 * services `[network]` asks for — circuit relay v2 server, DCUtR, a Kademlia DHT under
 * hearth's own protocol — and the readings of connections and addresses the status and the
 * dial-back probe need (relayed or direct, a direct connection's remote IP, the TCP ports listened
 * on, the relays this node holds a reservation on), and the public address the probe proved
 * dialable (a port forward's), advertised so peers and DCUtR dial it. The services themselves are
 * internet-services.ts (loaded with the libp2p stack when the network starts), libp2p-internet.ts
 * runs the rest.
 */
import './polyfill.ts';
import type { Connection } from '@libp2p/interface';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { NETWORK_DEFAULTS, type NetworkConfig } from '../config/config.ts';
import type { InternetStatus } from './network-port.ts';
import type { AutonatStatus, Reachability } from './reachability.ts';
export { RelayGuard } from './relay-guard.ts';

/** the `[network]` config section, whose keys and defaults config.ts documents */
export type InternetOptions = NetworkConfig;
export const DEFAULT_INTERNET: InternetOptions = NETWORK_DEFAULTS;

/** hearth networks keep a DHT of their own: peers of other libp2p networks never join its table */
export const DHT_PROTOCOL = '/hearth/kad/1.0.0';

/** the parts of libp2p's (internal) components the network uses */
export interface InternetComponents {
  /** `getAddrs()`: the addresses bound, verified or not (libp2p advertises a public one only once confirmed) */
  transportManager: { listen(addrs: Multiaddr[]): Promise<void>; getAddrs(): Multiaddr[] };
  addressManager: {
    confirmObservedAddr(addr: Multiaddr, options?: { type?: 'observed'; ttl?: number }): void;
    removeObservedAddr(addr: Multiaddr): void;
  };
}

/** a connection through a circuit relay (limited, or its remote address names `/p2p-circuit`) */
export function isRelayed(conn: Connection): boolean {
  return conn.limits !== undefined || String(conn.remoteAddr).includes('/p2p-circuit');
}

/**
 * Which relayed connections used up their data allowance (issue #24, "sync falls back to pulling
 * in batches"): a relay tells each end of a circuit its data limit, and libp2p counts it down on
 * the connection (`limits.bytes`, both directions) until the relay cuts the circuit. A relayed
 * connection that closed with at most half its allowance left carried a batch: the bootstrapper
 * treats it as progress, not as a peer hanging up (bootstrap.ts). Half, not all: the relay cuts on
 * the message that crosses the limit, which the far end never receives, so neither end sees the
 * count reach zero.
 */
export class RelayedAllowance {
  private readonly initial = new WeakMap<Connection, bigint>();

  /** Told every connection that opens: a relayed one with a data limit is remembered with its allowance. */
  opened(conn: Connection): void {
    const bytes = conn.limits?.bytes;
    if (bytes !== undefined && bytes > 0n && isRelayed(conn)) this.initial.set(conn, bytes);
  }

  /** Whether `conn`, closed now, was a relayed connection that used at least half its data allowance. */
  spent(conn: Connection): boolean {
    const initial = this.initial.get(conn);
    const left = conn.limits?.bytes;
    return initial !== undefined && left !== undefined && (initial - left) * 2n >= initial;
  }
}

/** The remote IP of the first direct (not relayed) connection among `connections`. */
export function directRemoteOf(connections: Connection[]): { ip: string; family: 4 | 6 } | undefined {
  for (const c of connections) {
    if (isRelayed(c)) continue;
    const ip = c.remoteAddr.getComponents().find((x) => x.name === 'ip4' || x.name === 'ip6');
    if (ip?.value) return { ip: ip.value, family: ip.name === 'ip6' ? 6 : 4 };
  }
  return undefined;
}

/** The TCP ports among `addresses`, relayed ones left out. */
export function tcpPortsOf(addresses: Multiaddr[]): number[] {
  const ports = new Set<number>();
  for (const a of addresses) {
    if (String(a).includes('/p2p-circuit')) continue;
    const tcpPort = a.getComponents().find((c) => c.name === 'tcp')?.value;
    if (tcpPort) ports.add(Number(tcpPort));
  }
  return [...ports];
}

/**
 * The relays this node holds a reservation on, read from its relayed addresses; `since` remembers
 * when each address first showed (kept up to date here: addresses gone are forgotten).
 */
export function relaysHeld(addresses: string[], since: Map<string, number>, now: number): InternetStatus['relays'] {
  const relayed = addresses.filter((a) => a.includes('/p2p-circuit'));
  for (const a of relayed) if (!since.has(a)) since.set(a, now);
  for (const a of [...since.keys()]) if (!relayed.includes(a)) since.delete(a);
  return relayed.flatMap((address) => {
    const relay = /\/p2p\/([^/]+)\/p2p-circuit/.exec(address)?.[1];
    return relay ? [{ peerId: relay, reservationStatus: 'accepted' as const, address, since: since.get(address) ?? now }] : [];
  });
}

/** The configured listen address with the port actually bound (the first TCP port among `bound`, relayed addresses aside). */
export function boundListenAddress(listen: Multiaddr, bound: Multiaddr[]): string[] {
  const port = tcpPortsOf(bound)[0];
  if (port === undefined) return [];
  return [listen.decapsulate('/tcp').encapsulate(`/tcp/${port}`).toString()];
}

/** how long an address the probe proved stays advertised without a newer answer (the probe rechecks within it) */
const PROVED_TTL_MS = 60 * 60_000;

/**
 * The address the dial-back probe proved, among the node's advertised addresses. A peer that
 * dialed this node back at `<the IP it sees>/tcp/<our listen port>` proved that address dialable:
 * behind a router with a port forward it is the router's public address, which the node cannot
 * learn from its own interfaces. libp2p's identify adds what a peer observed only unconfirmed (and
 * with the ephemeral port the node dialed out from), so without this a forwarded node would
 * advertise only its LAN address: invitations, identify and DCUtR's connection reversal would never
 * offer peers the address that works. A `private` verdict withdraws it.
 */
export class ProvedAddress {
  private advertised: Multiaddr | undefined;

  /** Told each verdict with the probe's newest answer. */
  update(components: InternetComponents | undefined, v: Reachability, last: AutonatStatus): void {
    if (!components) return;
    if (v === 'public' && last.lastTestResult === 'reachable' && last.lastTestObservedAddr) {
      const proved = multiaddr(last.lastTestObservedAddr);
      if (this.advertised && !this.advertised.equals(proved)) components.addressManager.removeObservedAddr(this.advertised);
      components.addressManager.confirmObservedAddr(proved, { type: 'observed', ttl: PROVED_TTL_MS });
      this.advertised = proved;
    } else if (v === 'private' && this.advertised) {
      components.addressManager.removeObservedAddr(this.advertised);
      this.advertised = undefined;
    }
  }
}
