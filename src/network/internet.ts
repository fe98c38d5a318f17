/**
 * The internet half of the libp2p network (issue #24; docs/network.md "Across the internet"): the
 * services `[network]` asks for — circuit relay v2 server, AutoNAT, DCUtR, a Kademlia DHT under
 * hearth's own protocol — and the readings of connections and addresses the status and the
 * dial-back probe need (relayed or direct, a direct connection's remote IP, the TCP ports listened
 * on, the relays this node holds a reservation on). libp2p.ts owns the node and wires these in.
 */
import './polyfill.ts';
import { autoNAT } from '@libp2p/autonat';
import { circuitRelayServer } from '@libp2p/circuit-relay-v2';
import { dcutr } from '@libp2p/dcutr';
import type { Connection } from '@libp2p/interface';
import { kadDHT, passthroughMapper } from '@libp2p/kad-dht';
import type { Multiaddr } from '@multiformats/multiaddr';
import { NETWORK_DEFAULTS, type NetworkConfig } from '../config/config.ts';
import type { InternetStatus } from './contract.ts';
import type { RelayGuard } from './relay-guard.ts';
export { RelayGuard } from './relay-guard.ts';
export { boundedRelayTransport } from './relay-search.ts';

/** the `[network]` config section, whose keys and defaults config.ts documents */
export type InternetOptions = NetworkConfig;
export const DEFAULT_INTERNET: InternetOptions = NETWORK_DEFAULTS;

/** hearth networks keep a DHT of their own: peers of other libp2p networks never join its table */
export const DHT_PROTOCOL = '/hearth/kad/1.0.0';

type ServiceFactory = (components: never) => unknown;

/** the part of libp2p's (internal) transport manager the network uses */
export interface TransportManager {
  listen(addrs: Multiaddr[]): Promise<void>;
}

/**
 * The services of the internet half, as configured. `onTransports` receives libp2p's transport
 * manager (through a pseudo-service), so the node can listen on `/p2p-circuit` once it finds itself
 * private.
 */
export function internetServices(o: InternetOptions, onTransports: (manager: TransportManager) => void, guard?: RelayGuard): Record<string, ServiceFactory> {
  const services: Record<string, ServiceFactory> = {};
  if (o.relayServer) {
    // the relay sees libp2p's components through the guard: it counts and bounds what each peer asks
    const relay = circuitRelayServer({
      reservations: {
        maxReservations: o.relayMaxReservations,
        applyDefaultLimit: o.relayDataLimitBytes > 0 || o.relayDurationLimitSecs > 0,
        ...(o.relayDataLimitBytes > 0 ? { defaultDataLimit: BigInt(o.relayDataLimitBytes) } : {}),
        ...(o.relayDurationLimitSecs > 0 ? { defaultDurationLimit: o.relayDurationLimitSecs * 1000 } : {}),
      },
    });
    services.relay = ((components: object) => relay((guard ? guard.wrap(components) : components) as never)) as never;
  }
  if (o.autonat) services.autonat = autoNAT({ startupDelay: 5_000 }) as never;
  services.transports = ((components: { transportManager: TransportManager }) => {
    onTransports(components.transportManager);
    return {};
  }) as never;
  if (o.holePunching && o.relayClient) services.dcutr = dcutr() as never;
  if (o.dht) {
    // private addresses stay in the table: hearth networks live on LANs and loopback too. Queries
    // wait for a first peer (allowQueryWithZeroPeers: true makes libp2p's random walk spin on an
    // empty table and starve the event loop)
    // `dht_client`: query and announce only, never answer queries nor enter others' routing tables
    services.dht = kadDHT({ protocol: DHT_PROTOCOL, clientMode: o.dhtClient, peerInfoMapper: passthroughMapper }) as never;
  }
  return services;
}

/** a connection through a circuit relay (limited, or its remote address names `/p2p-circuit`) */
export function isRelayed(conn: Connection): boolean {
  return conn.limits !== undefined || String(conn.remoteAddr).includes('/p2p-circuit');
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
