/**
 * The network's port: what the rest of the node sees of the peer-to-peer network (issue #12;
 * domain.md §1; its conformance suite is network-port-suite.ts): gossip on named topics,
 * request/response exchanges on named stream protocols, and peer events. No libp2p type crosses
 * this line: `src/network/` implements it over libp2p for the node and in memory for
 * tests (`memory.ts`), and every other domain is handed a `Network`.
 *
 * A peer is named by its node signing key (64 lowercase hex of the Ed25519 public key): the libp2p
 * peer id is derived from that same key, and Noise authenticates it on every connection, so a
 * request's `peer` is the key the remote node signs governance ops and deltas with. Domains
 * authorize peers with it (which account that key speaks for) and never see libp2p's peer id form.
 */
import type { RelayGuardStatus } from './relay-guard.ts';
import type { PayloadCount, PayloadCounters } from './payload.ts';
import type { PeerKey } from './peer-key.ts';

export type { PeerKey };

export interface GossipMessage {
  topic: string;
  /** the node that published the message (gossipsub signs messages with the origin's key) */
  from: PeerKey;
  data: Uint8Array;
}

/**
 * Receives one gossip message. A throw or a rejected promise is caught by the network, counted as a
 * dropped message and logged at debug; it never reaches the publisher.
 */
export type GossipHandler = (msg: GossipMessage) => void | Promise<void>;

/** Whether gossip published by `from` may be delivered and forwarded (checked before forwarding). */
export type GossipAdmission = (from: PeerKey) => boolean;

export interface RequestContext {
  /** the authenticated remote node */
  peer: PeerKey;
  protocol: string;
  /** aborted when the handler's deadline passes, the stream breaks or the node stops */
  signal: AbortSignal;
}

/**
 * Answers one request frame with one response frame, or with a sequence of frames (snapshots,
 * blobs). Throwing `PeerRefusal` sends its message to the requester as a refusal; any other throw
 * sends a generic refusal and is logged (the message may hold local details).
 */
export type RequestHandler = (request: Uint8Array, ctx: RequestContext) => Promise<Uint8Array | AsyncIterable<Uint8Array>>;

export interface ProtocolOptions {
  /**
   * A larger request frame is refused before it is read (the requester gets `too_large`) and
   * counts against the peer (`oversized_frame`). At most `MAX_FRAME_BYTES`.
   */
  maxRequestBytes: number;
  /**
   * The handler's deadline (reading the request included): when it passes, `ctx.signal` aborts,
   * the exchange is reset and the requester gets `PeerNetworkError('protocol')`.
   */
  timeoutMs: number;
  /** concurrent inbound exchanges of this protocol per peer; more are refused (default 8) */
  maxInboundPerPeer?: number;
}

export interface RequestOptions {
  /** deadline for the whole exchange, dial included */
  timeoutMs: number;
  /** a larger response frame ends the exchange with `PeerNetworkError('too_large')` */
  maxResponseFrameBytes: number;
  signal?: AbortSignal;
}

export type PeerEvent = { type: 'connected' | 'disconnected'; peer: PeerKey };

export type PeerNetworkErrorKind =
  /** no connection to the peer could be made */
  | 'unreachable'
  /** the peer does not serve this protocol (it counts the attempt against the requester: `unknown_protocol`) */
  | 'unsupported'
  /** the deadline passed */
  | 'timeout'
  /** the caller's signal aborted, or this node is stopping */
  | 'aborted'
  /** a frame exceeded its bound: a response frame past `maxResponseFrameBytes`, a request past the
   * responder's `maxRequestBytes`, a gossip message past `MAX_GOSSIP_BYTES` */
  | 'too_large'
  /** the peer refused the request (its message is in `message`) */
  | 'refused'
  /** the stream broke, was reset (the responder's deadline) or carried malformed framing */
  | 'protocol';

/**
 * How an exchange, dial or publish with peers failed. Not the SDK's `NetworkError`
 * (src/client/errors.ts: an HTTP request that got no answer), hence the name.
 */
export class PeerNetworkError extends Error {
  override name = 'PeerNetworkError';
  constructor(
    readonly kind: PeerNetworkErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** Thrown by a request handler to refuse with a message the requester may see. */
export class PeerRefusal extends Error {
  override name = 'PeerRefusal';
}

export interface Network {
  /** this node's own key (its signing identity) */
  readonly self: PeerKey;

  /** payload bytes by channel: the network counts gossip, the stream router its exchanges (payload.ts) */
  readonly payload?: PayloadCounters;

  /**
   * Delivers messages published on `topic` by other nodes (never this node's own). Subscribing
   * joins the topic's mesh; the returned function unsubscribes this handler, and the topic is left
   * when its last handler goes.
   *
   * `admit`, when given, says whether a message published by `from` (its signature already checked)
   * may be taken at all: one it refuses is neither delivered nor **forwarded** to other peers, and its
   * publisher is penalised (`unauthorized`). A topic with several handlers admits what any admits.
   */
  subscribe(topic: string, handler: GossipHandler, admit?: GossipAdmission): () => void;

  /**
   * Publishes to every subscribed peer (flood publish). Resolves with the number of peers it was
   * sent to; 0 when none is subscribed (not an error: catch-up repairs what gossip misses).
   * Rejects with `PeerNetworkError('too_large')` past the gossip size bound.
   */
  publish(topic: string, data: Uint8Array): Promise<number>;

  /** connected peers subscribed to `topic` */
  topicPeers(topic: string): PeerKey[];

  /** every connected peer */
  peers(): PeerKey[];

  /**
   * `peers().length`, kept as connections come and go rather than counted per call (the admin
   * `GET /admin-api/peers` route answers it on every request).
   */
  peerCount(): number;

  /**
   * Addresses other nodes can dial this node at (libp2p multiaddrs ending in `/p2p/<peer id>`;
   * `/memory/<key>` in memory), e.g. for an invitation's `admitter_addrs` hints.
   */
  addresses(): string[];

  /** Connects to a node at an address from `addresses()`; resolves with its key. Rejects with `PeerNetworkError`. */
  dial(address: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<PeerKey>;

  /**
   * Keeps a node connected from now on, as a bootstrap peer: dialed at once (at start when not
   * started yet) and redialed with backoff whenever it is not connected, until stop. Throws on an
   * address that does not parse.
   */
  keep(address: string): void;

  /** Serves a request/response protocol. Registering the same protocol twice is a bug (throws). */
  handle(protocol: string, handler: RequestHandler, opts: ProtocolOptions): void;

  /** One request, one response frame. Rejects with `PeerNetworkError`. */
  request(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array>;

  /** One request, a stream of response frames (ends when the responder ends it). Throws `PeerNetworkError`. */
  requestStream(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): AsyncIterable<Uint8Array>;

  /** Peer connection events; the returned function removes the listener. */
  onPeer(listener: (e: PeerEvent) => void): () => void;

  /**
   * Reports one piece of hostile or malformed input from a peer (a bad frame, a bad signature, an
   * op it had no right to send). The network counts it per reason (metrics), logs it at debug with
   * the peer and `detail`, and disconnects and refuses (bans) a peer that keeps it up.
   */
  penalize(peer: PeerKey, reason: PenaltyReason, detail?: string): void;

  /** What the node's network is doing, for the admin API's status, peers and usage routes. */
  status(): NetworkStatus;

  /**
   * Content routing (issue #24; docs/network.md "Blob providers in the DHT"): announces this node
   * as a provider of `key` (64 lowercase hex: a SHA-256 digest, e.g. a blob id) to the nodes of
   * the DHT closest to it. Rejects with `PeerNetworkError`: `unsupported` when this node runs no DHT,
   * `unreachable` when no DHT peer took the record, `aborted` on `signal` or stop.
   */
  provide(key: string, opts?: { signal?: AbortSignal }): Promise<void>;

  /**
   * Stops announcing `key` (its re-announcement ends); records already held elsewhere expire with
   * their validity. Never rejects.
   */
  unprovide(key: string): Promise<void>;

  /**
   * The providers of `key` other than this node, as the DHT finds them, at most `max` of them and
   * until `timeoutMs` or `signal` ends the search (the iteration then ends: no error). The
   * addresses a record carries are learnt, so a `request` to a provider dials it (through the DHT's
   * peer routing when the record carried none). Yields nothing when this node runs no DHT.
   */
  findProviders(key: string, opts: { timeoutMs: number; max: number; signal?: AbortSignal }): AsyncIterable<PeerKey>;
}

/** A content-routing key: a SHA-256 digest in lowercase hex. */
export const CONTENT_KEY = /^[0-9a-f]{64}$/;

/**
 * Why a peer is penalized: a closed set, so the reason can be a metrics label. The first four are
 * raised by the network itself; domains pick the nearest of the others and put specifics in
 * `detail` (logged, never a label).
 */
export const PENALTY_REASONS = [
  /** stream framing that does not parse: garbage, a frame cut short, an unknown envelope tag */
  'malformed_frame',
  /** a frame whose length prefix is past its bound */
  'oversized_frame',
  /** a stream on which the peer proposed only protocols this node does not serve */
  'unknown_protocol',
  /** a request frame not completed within the protocol's deadline */
  'stalled_request',
  /** a payload that does not decode, an unknown message kind, a message past a domain bound */
  'invalid_message',
  /** a signature that does not verify */
  'bad_signature',
  /** an op or request the sender had no right to make (not a member, missing capability) */
  'unauthorized',
  /** a message already seen, sent again */
  'replay',
  /** reservation requests or circuits through this relay past its per-peer policy (relay-guard.ts) */
  'relay_abuse',
] as const;
export type PenaltyReason = (typeof PENALTY_REASONS)[number];

/** How an inbound exchange ended (closed set: a metrics label). */
export type InboundOutcome =
  /** answered to the end */
  | 'ok'
  /** the handler refused (`PeerRefusal`) */
  | 'refused'
  /** refused before reading: the peer's concurrent-exchange limit was reached */
  | 'busy'
  /** refused before reading: the request's length prefix was past the protocol's bound */
  | 'too_large'
  /** the handler threw something else (a generic refusal was sent) */
  | 'error'
  /** the handler's deadline passed (the stream was reset) */
  | 'timeout'
  /** the request's framing was malformed, cut short or stalled */
  | 'malformed'
  /** the requester went away before the end */
  | 'cancelled';

/** How an outbound exchange ended: `ok`, or the kind of the `PeerNetworkError` it raised. */
export type OutboundOutcome = 'ok' | PeerNetworkErrorKind;

export interface RequestCount {
  /** a protocol this node serves, or `other` (labels stay a closed set) */
  protocol: string;
  direction: 'in' | 'out';
  outcome: InboundOutcome | OutboundOutcome;
  count: number;
}

export interface ConnectionStatus {
  peer: PeerKey;
  /** the libp2p form of the peer id (`12D3KooW…`) */
  peerId: string;
  remoteAddress: string;
  direction: 'inbound' | 'outbound';
  /** milliseconds since the Unix epoch */
  openedAt: number;
}

export interface NetworkStatus {
  peerKey: PeerKey;
  /** this node's libp2p peer id (`12D3KooW…`), derived from `peerKey` */
  peerId: string;
  /** the addresses listened on (a wildcard host stays a wildcard; the port is the bound one) */
  listenAddresses: string[];
  /** the dialable addresses, as `addresses()` */
  externalAddresses: string[];
  /** one entry per open connection (a peer may have more than one) */
  connections: ConnectionStatus[];
  /** the topics this node is subscribed to, with the connected peers subscribed to each and, over gossipsub, those in its mesh */
  topics: { topic: string; peers: number; mesh?: number }[];
  /** payload bytes by channel and direction (payload.ts); absent where the network counts none */
  payload?: PayloadCount[];
  /** bytes carried over connections since start */
  bytes: { in: number; out: number };
  /** gossip messages received, published, and received but dropped by a throwing handler */
  gossip: { in: number; out: number; dropped: number };
  /** inbound and outbound exchanges; `refused` counts inbound ones refused (refused, busy, too_large) */
  requests: { in: number; out: number; refused: number; byProtocol: RequestCount[] };
  penalties: Partial<Record<PenaltyReason, number>>;
  /** peers refused until `until` (ms since the epoch) */
  banned: { peer: PeerKey; until: number }[];
  /** relays, hole punching, reachability and the DHT (issue #24); absent where the network has none */
  internet?: InternetStatus;
}

/** The internet half of a network's status (docs/network.md "Across the internet"). */
export interface InternetStatus {
  /** relays this node holds a reservation on (its relayed addresses name them) */
  relays: { peerId: string; reservationStatus: 'accepted'; address: string; since: number }[];
  /** this node as a relay: reservations it holds for others; undefined when it serves none */
  relayServer?: { reservations: number; maxReservations: number };
  /** this node as a relay: what its guard counted (relay-guard.ts); undefined when it serves none */
  relayGuard?: RelayGuardStatus;
  directUpgrades: { peerId: string; status: 'pending' | 'succeeded' | 'failed'; reason: string | null; connectionId: string | null; lastAttempt: number }[];
  upgradeCounts: { attempts: number; successes: number };
  autonat: {
    reachability: 'public' | 'private' | 'unknown';
    lastTestAddr: string | null;
    lastTestResult: 'reachable' | 'unreachable' | 'error' | null;
    lastTestReason: string | null;
    lastTestObservedAddr: string | null;
    lastTestAt: number | null;
  };
  /** peers in the Kademlia routing table; undefined when the DHT is off */
  dht?: { routingTableSize: number; protocol: string };
}

/** `ProtocolOptions.maxInboundPerPeer` when not given. */
export const DEFAULT_INBOUND_PER_PEER = 8;

/** Largest gossip message (domain.md §1.1: gossipsub `max_transmit_size` 1 MiB). */
export const MAX_GOSSIP_BYTES = 1024 * 1024;

/** Largest stream frame (domain.md §1.5: 8 MiB). */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;
