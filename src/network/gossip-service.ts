/**
 * The gossipsub service of the libp2p network (domain.md §1.1): mesh 2/4/8, one outbound, flood
 * publish, strictly signed messages of at most 1 MiB (plus room for the RPC framing), 1 s back-offs,
 * and gossip over relayed (limited) connections too. Peers on loopback, private and link-local
 * addresses are exempt from gossipsub's IP colocation penalty (docs/decisions.md, issue #24).
 * Every message is validated before gossipsub forwards it (`gossipValidator`, issue #37 item 7).
 */
import './polyfill.ts';
import { BlockList, isIP } from 'node:net';
import { gossipsub, TopicValidatorResult, type TopicValidatorFn } from '@libp2p/gossipsub';
import type { Connection, PeerId } from '@libp2p/interface';
import { MAX_GOSSIP_BYTES, type PeerKey, type PenaltyReason } from './network-port.ts';
import { peerKeyOf } from './peer-id.ts';

/** Gossip RPC frames may carry a full message plus its signature, key and topic. */
const GOSSIP_RPC_SLACK = 64 * 1024;

/**
 * Address ranges where many nodes behind one IP are expected, not a Sybil sign: one machine
 * (loopback), a LAN or a home behind NAT (RFC 1918, IPv6 unique local), link-local. Public
 * addresses keep gossipsub's protection (more than 10 peers from one IP score ever lower).
 */
const LOCAL_RANGES = (() => {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addSubnet('10.0.0.0', 8, 'ipv4');
  list.addSubnet('172.16.0.0', 12, 'ipv4');
  list.addSubnet('192.168.0.0', 16, 'ipv4');
  list.addSubnet('169.254.0.0', 16, 'ipv4');
  list.addAddress('::1', 'ipv6');
  list.addSubnet('fc00::', 7, 'ipv6');
  list.addSubnet('fe80::', 10, 'ipv6');
  return list;
})();

/** Whether `ip` (as gossipsub reads it off a connection) is a loopback, private or link-local address. */
export function isLocalAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  // an IPv4-mapped IPv6 address is judged by its IPv4 part
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1] : undefined;
  if (mapped) return LOCAL_RANGES.check(mapped, 'ipv4');
  return LOCAL_RANGES.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * gossipsub takes its colocation exemptions as a set of exact IPs and asks it only `has(ip)`: this
 * set answers for whole ranges. Nothing is ever added to it.
 */
export class LocalAddressSet extends Set<string> {
  override has(ip: string): boolean {
    return isLocalAddress(ip) || super.has(ip);
  }
}

/** The service's options (exported for the colocation test, which scores peers with them). */
export function gossipOptions() {
  return {
    D: 4,
    Dlo: 2,
    Dhi: 8,
    Dout: 1,
    Dscore: 2,
    floodPublish: true,
    globalSignaturePolicy: 'StrictSign' as const,
    emitSelf: false,
    allowPublishToZeroTopicPeers: true,
    fallbackToFloodsub: false,
    maxInboundDataLength: MAX_GOSSIP_BYTES + GOSSIP_RPC_SLACK,
    pruneBackoff: 1_000,
    unsubcribeBackoff: 1_000,
    // a peer reached only through a relay still replicates (the relay bounds its data)
    runOnLimitedConnection: true,
    // without it, the 11th node on one machine or LAN sends every other node's score below the
    // graylist threshold (10 peers per IP, then -5 × surplus²): gossip from all of them is ignored
    scoreParams: { IPColocationFactorWhitelist: new LocalAddressSet() },
  } satisfies Parameters<typeof gossipsub>[0];
}

export function gossipService(): ReturnType<typeof gossipsub> {
  return gossipsub(gossipOptions());
}

/**
 * The check gossipsub runs on a message after its signature and before it delivers or forwards it
 * (a topic validator): the publisher is an Ed25519 node key, the message within the gossip bound,
 * and its topic admits the publisher (network-port.ts `subscribe`'s `admit`: for a context topic, a
 * member node of the context's group). A refused message is neither delivered nor forwarded — a
 * hub no longer relays a non-member's megabytes to every member — and its publisher is penalised.
 * gossipsub also scores the peer that relayed it down for an invalid delivery.
 */
export function gossipValidator(admits: (topic: string, from: PeerKey) => boolean, penalize: (peer: PeerKey, reason: PenaltyReason, detail: string) => void): TopicValidatorFn {
  return (_relayedBy, msg) => {
    const from = msg.type === 'signed' ? peerKeyOf(msg.from) : undefined;
    if (!from) return TopicValidatorResult.Reject; // StrictSign: gossipsub refuses unsigned ones before this
    if (msg.data.byteLength > MAX_GOSSIP_BYTES) {
      penalize(from, 'invalid_message', `gossip message of ${msg.data.byteLength} bytes on ${msg.topic}`);
      return TopicValidatorResult.Reject;
    }
    if (!admits(msg.topic, from)) {
      penalize(from, 'unauthorized', `gossip on ${msg.topic} from a publisher the topic does not admit`);
      return TopicValidatorResult.Reject;
    }
    return TopicValidatorResult.Accept;
  };
}

/**
 * Gives gossipsub an outbound stream to `peer` again after one of its connections closed while
 * others stay open. gossipsub sends to a peer on one outbound stream, opened on the connection
 * libp2p's registrar announced; the registrar announces a peer once (when identify first completes)
 * and again only after the peer's last connection closed. Two connections at once are common over
 * a relay (both ends redial after a cut circuit at the same moment); when the one carrying the
 * stream closed (cut at the relay's data limit) and the other stayed, gossipsub never heard of the
 * other and sent that peer nothing more, for good (issue #24: the relay-limit e2e test, where A's
 * 320 writes never reached B, B "caught up" and idle). `createOutboundStream` does nothing while a
 * stream is still open or the peer is unknown to gossipsub; it runs after the close's own events
 * (the closed stream's) have been handled. A direct connection is preferred to a relayed one.
 */
export function regainGossipStream(pubsub: unknown, peer: PeerId, connections: () => Connection[]): void {
  const create = (pubsub as { createOutboundStream?: (peer: PeerId, conn: Connection) => Promise<void> } | undefined)?.createOutboundStream;
  if (typeof create !== 'function') return;
  setTimeout(() => {
    const open = connections().filter((c) => c.status === 'open');
    const conn = open.find((c) => c.limits === undefined) ?? open[0];
    if (conn) void create.call(pubsub, peer, conn).catch(() => undefined);
  }, 0);
}
