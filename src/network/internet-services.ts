/**
 * The services of the internet half of the libp2p network (issue #24; docs/network.md "Across the
 * internet"): circuit relay v2 server, DCUtR, a Kademlia DHT under hearth's own protocol, as
 * `[network]` asks for them. Part of the libp2p stack libp2p-node.ts builds, which the network
 * loads only when it starts (issue #33: the node answers HTTP before that code is loaded);
 * internet.ts holds what the network reads of connections and addresses before and after.
 */
import './polyfill.ts';
import { circuitRelayServer } from '@libp2p/circuit-relay-v2';
import { dcutr } from '@libp2p/dcutr';
import { kadDHT, passthroughMapper } from '@libp2p/kad-dht';
import { DHT_PROTOCOL, type InternetComponents, type InternetOptions } from './internet.ts';
import type { RelayGuard } from './relay-guard.ts';

type ServiceFactory = (components: never) => unknown;

/**
 * The services of the internet half, as configured. `onComponents` receives libp2p's transport and
 * address managers (through a pseudo-service), so the node can listen on `/p2p-circuit` once it
 * finds itself private, and advertise the address the dial-back probe proved.
 */
export function internetServices(o: InternetOptions, onComponents: (components: InternetComponents) => void, guard?: RelayGuard): Record<string, ServiceFactory> {
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
    services.relay = ((components: object) => {
      const server = relay((guard ? guard.wrap(components) : components) as never);
      guard?.serve(server.reservations);
      return server;
    }) as never;
  }
  // no @libp2p/autonat: hearth's dial-back probe (reachability.ts) decides reachability. In the NAT
  // lab, with public-looking addresses, its server side cut a forwarded home node off its only peer
  // (docs/decisions.md)
  services.transports = ((components: InternetComponents) => {
    onComponents(components);
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
