/**
 * The node's network in words, for the Network page (pages/network.tsx; docs/dashboard.md): the
 * answer of `GET /admin-api/network/status` (docs/network.md "Status and metrics") read into a
 * typed view that tolerates missing fields, what a gossip topic is by its name, and a one-line
 * summary. No rendering here, so it is unit-tested (network-status.test.ts).
 */
import type { NetworkStatus } from '../../../src/client/index.ts';

export interface Connection {
  peerId: string;
  peerKey: string;
  remoteAddr: string;
  direction: string;
  /** RFC 3339 */
  openedAt: string;
}

export interface Ban {
  peerKey: string;
  /** RFC 3339 */
  until: string;
}

export interface NetworkView {
  localPeerId: string;
  listenAddrs: string[];
  externalAddrs: string[];
  standalone: boolean;
  connections: Connection[];
  topics: { topic: string; peers: number }[];
  bytes: { in: number; out: number };
  gossip: { in: number; out: number; dropped: number };
  requests: { in: number; out: number; refused: number };
  /** reasons with a count above 0, most frequent first */
  penalties: { reason: string; count: number }[];
  banned: Ban[];
  /** `autonat.reachability`: whether peers could dial this node back (docs/network.md "Across the internet") */
  reachability: 'public' | 'private' | 'unknown';
  /** peer ids of the relays this node holds a reservation on */
  relays: string[];
  replication?: Record<string, unknown>;
}

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** The status as the page uses it; a field the node left out reads as empty or 0, never a crash. */
export function readNetworkStatus(raw: NetworkStatus): NetworkView {
  const bytes = obj(raw.bytes);
  const gossip = obj(raw.gossip);
  const requests = obj(raw.requests);
  const penalties = Object.entries(obj(raw.penalties))
    .map(([reason, count]) => ({ reason, count: num(count) }))
    .filter((p) => p.count > 0)
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  return {
    localPeerId: str(raw.localPeerId),
    listenAddrs: strings(raw.listenAddrs),
    externalAddrs: strings(raw.externalAddrs),
    standalone: raw.standalone === true,
    connections: list(raw.connections).map((c) => ({ peerId: str(c.peerId), peerKey: str(c.peerKey), remoteAddr: str(c.remoteAddr), direction: str(c.direction), openedAt: str(c.openedAt) })),
    topics: list(raw.topics)
      .map((t) => ({ topic: str(t.topic), peers: num(t.peers) }))
      .sort((a, b) => a.topic.localeCompare(b.topic)),
    bytes: { in: num(bytes.in), out: num(bytes.out) },
    gossip: { in: num(gossip.in), out: num(gossip.out), dropped: num(gossip.dropped) },
    requests: { in: num(requests.in), out: num(requests.out), refused: num(requests.refused) },
    penalties,
    banned: list(raw.banned).map((b) => ({ peerKey: str(b.peerKey), until: str(b.until) })),
    reachability: reachabilityOf(obj(raw.autonat).reachability),
    relays: list(raw.relays).map((r) => str(r.peerId)).filter(Boolean),
    ...(raw.replication && typeof raw.replication === 'object' ? { replication: obj(raw.replication) } : {}),
  };
}

function reachabilityOf(v: unknown): NetworkView['reachability'] {
  return v === 'public' || v === 'private' ? v : 'unknown';
}

/** A multiaddr on the loopback interface (`/ip4/127.…`, `/ip6/::1`): only this machine reaches it. */
const LOOPBACK = /^\/(ip4\/127\.|ip6\/::1\/|dns4?\/localhost\/)/;

/** The node listens on loopback addresses only (and announces no other): nothing off this machine can dial it. */
export const loopbackOnly = (view: NetworkView): boolean =>
  view.listenAddrs.length > 0 && [...view.listenAddrs, ...view.externalAddrs].every((a) => LOOPBACK.test(a));

/**
 * What the reachability verdict means for the person running the node, in one sentence. A node that
 * listens on 127.0.0.1 only is called local whatever the verdict: peers on the same machine dial it
 * back, which is no reason to call it public (issue #34 §3).
 */
export function reachabilityMeaning(view: NetworkView): string {
  if (loopbackOnly(view)) return 'Local only: this node listens on loopback addresses (127.0.0.1) only, so only nodes on this machine can connect to it; start it with --swarm-host 0.0.0.0 (or set [swarm] host) to be reachable from other machines.';
  if (view.reachability === 'public') return 'Public: peers dialed this node back, so other nodes can connect to it directly.';
  if (view.reachability === 'private') {
    const via = view.relays.length ? ` It is reachable through ${view.relays.length === 1 ? 'a relay' : `${view.relays.length} relays`} (the /p2p-circuit addresses above).` : ' It holds no relay reservation yet, so only nodes it dials itself can reach it.';
    return `Private: peers could not dial this node back (it is behind NAT or a firewall).${via}`;
  }
  return 'Unknown: no directly connected peer has tested this node yet.';
}

export type TopicKind = 'namespace' | 'context' | 'specialized' | 'other';

export interface TopicInfo {
  kind: TopicKind;
  /** the namespace or context id the topic belongs to */
  id?: string;
  /** what the topic carries, in a few words */
  description: string;
}

const HEX64 = /^[0-9a-f]{64}$/i;

/**
 * What a gossip topic carries, by its name (src/network/topic-names.ts): `ns/<hex>` is a namespace's
 * governance, a bare 64-hex id a context's state, `mero_specialized_node_invites` the specialized-node
 * discoveries (docs/sync.md "Specialized nodes"); any other name is shown as it is.
 */
export function classifyTopic(topic: string): TopicInfo {
  if (topic.startsWith('ns/') && HEX64.test(topic.slice(3))) {
    return { kind: 'namespace', id: topic.slice(3).toLowerCase(), description: "a namespace's governance" };
  }
  if (HEX64.test(topic)) return { kind: 'context', id: topic.toLowerCase(), description: "a context's state" };
  if (topic === 'mero_specialized_node_invites') return { kind: 'specialized', description: 'specialized-node invitations' };
  return { kind: 'other', description: 'not a topic hearth names' };
}

/** One line for the page's head: standalone, or how many peers and topics. */
export function networkSummary(view: NetworkView): string {
  if (view.standalone) return 'This node runs without a network: it connects to no peer and nothing replicates to or from it.';
  const peers = view.connections.length;
  const distinct = new Set(view.connections.map((c) => c.peerKey || c.peerId)).size;
  const peerWords = peers === 0 ? 'No peer connected' : distinct === peers ? `${peers} peer${peers === 1 ? '' : 's'} connected` : `${distinct} peer${distinct === 1 ? '' : 's'} connected (${peers} connections)`;
  const topics = view.topics.length;
  const bans = view.banned.length ? `, ${view.banned.length} banned` : '';
  return `${peerWords}, ${topics} topic${topics === 1 ? '' : 's'} followed${bans}.`;
}

/** Whether a ban still holds at `now` (a ban whose time passed is shown as ended). */
export const banActive = (ban: Ban, now = Date.now()): boolean => {
  const until = Date.parse(ban.until);
  return Number.isNaN(until) || until > now;
};
