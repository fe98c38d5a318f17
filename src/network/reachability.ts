/**
 * AutoNAT for hearth networks (issue #24; the reference reports `autonat.reachability` in
 * `GET /admin-api/network/status`, admin-wire-a §2): does a peer that this node reaches over a
 * direct connection manage to dial this node back on a fresh connection?
 *
 * Why our own dial-back and not only `@libp2p/autonat`: that module verifies only addresses outside
 * private ranges and needs 4 confirming (8 refuting) peers in distinct /8 segments before it
 * decides, so on a home LAN, a small network or a test network it never leaves "unknown"; and in
 * the NAT lab its server side cut a home node behind a port forward off its only peer, so it is not
 * run at all (docs/decisions.md). This probe answers the question the status asks, truthfully,
 * from the peers the node has.
 *
 * Protocol `/hearth/dialback/1.0.0`, one request/response exchange (frames.ts):
 * - request: JSON `{ports: number[]}` (1–4 TCP ports the requester listens on);
 * - the responder dials `<the requester's IP as it sees it>/tcp/<port>/p2p/<requester>` for each
 *   port on a new connection (never another host: the probe cannot be used to make a node dial a
 *   third party), at most 5 s each, and answers JSON `{observed, ok, reason?}`;
 * - a peer reached only through a relay has no IP to dial back: refused.
 * A responder serves one probe per peer per 30 s and four at once; more are refused, not queued.
 *
 * Verdict: the answers of the last three distinct peers; `public` when more said "reached" than
 * not, `private` when more said "not reached", the newest answer on a tie; `unknown` before any.
 */
import { PeerNetworkError, PeerRefusal, type PeerKey, type ProtocolOptions, type RequestHandler, type RequestOptions } from './network-port.ts';

export const DIALBACK_PROTOCOL = '/hearth/dialback/1.0.0';
const MAX_PORTS = 4;
const DIAL_TIMEOUT_MS = 5_000;
const PER_PEER_INTERVAL_MS = 30_000;
const MAX_CONCURRENT = 4;
const VOTERS = 3;
/** how long a verdict holds before the node asks again */
const RECHECK_MS = 10 * 60_000;

export type Reachability = 'public' | 'private' | 'unknown';

export interface AutonatStatus {
  reachability: Reachability;
  lastTestAddr: string | null;
  lastTestResult: 'reachable' | 'unreachable' | 'error' | null;
  lastTestReason: string | null;
  lastTestObservedAddr: string | null;
  /** ms since the epoch */
  lastTestAt: number | null;
}

export interface ReachabilityHost {
  request(peer: PeerKey, protocol: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array>;
  handle(protocol: string, handler: RequestHandler, opts: ProtocolOptions): void;
  /** the remote address of a direct (not relayed) connection to `peer`: `{ip, family}` */
  directRemote(peer: PeerKey): { ip: string; family: 4 | 6 } | undefined;
  /** dials `address` on a new connection and closes it again; answers the peer key reached */
  dialBack(address: string, signal: AbortSignal): Promise<PeerKey>;
  /** the libp2p peer id string of a peer key (for the `/p2p/` part) */
  peerIdOf(peer: PeerKey): string;
  /** the TCP ports this node listens on */
  listenPorts(): number[];
  now(): number;
  /** told the verdict after each answer (optional) */
  verdict?(v: Reachability): void;
}

interface Vote {
  peer: PeerKey;
  ok: boolean;
}

const encode = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

export class ReachabilityProbe {
  private votes: Vote[] = [];
  private last: Omit<AutonatStatus, 'reachability'> = { lastTestAddr: null, lastTestResult: null, lastTestReason: null, lastTestObservedAddr: null, lastTestAt: null };
  private readonly servedAt = new Map<PeerKey, number>();
  private serving = 0;
  private readonly asked = new Map<PeerKey, number>();
  private inflight = 0;

  constructor(private readonly host: ReachabilityHost) {}

  /** Serves the dial-back protocol. */
  start(): void {
    this.host.handle(DIALBACK_PROTOCOL, (data, ctx) => this.serve(ctx.peer, data, ctx.signal), {
      maxRequestBytes: 256,
      timeoutMs: DIAL_TIMEOUT_MS * MAX_PORTS + 1_000,
      maxInboundPerPeer: 1,
    });
  }

  status(): AutonatStatus {
    return { reachability: this.verdict(), ...this.last };
  }

  /** A peer connected: asks it to dial back when the verdict is missing or old and it was not asked lately. */
  onConnected(peer: PeerKey): void {
    const now = this.host.now();
    const fresh = this.votes.length >= VOTERS && this.last.lastTestAt !== null && now - this.last.lastTestAt < RECHECK_MS;
    if (fresh || this.inflight >= 2) return;
    const askedAt = this.asked.get(peer);
    if (askedAt !== undefined && now - askedAt < RECHECK_MS) return;
    if (!this.host.directRemote(peer)) return; // a relayed peer cannot dial our IP back
    this.asked.set(peer, now);
    this.inflight++;
    void this.ask(peer).finally(() => this.inflight--);
  }

  /** Asks `peer` to dial this node back; records its answer. Never throws. */
  async ask(peer: PeerKey): Promise<void> {
    const ports = this.host.listenPorts().slice(0, MAX_PORTS);
    if (ports.length === 0) return;
    const at = this.host.now();
    try {
      const raw = await this.host.request(peer, DIALBACK_PROTOCOL, encode({ ports }), { timeoutMs: DIAL_TIMEOUT_MS * MAX_PORTS + 2_000, maxResponseFrameBytes: 1024 });
      const answer = parseAnswer(raw);
      if (!answer) throw new Error('malformed dial-back answer');
      this.vote(peer, answer.ok);
      this.last = {
        lastTestAddr: answer.observed,
        lastTestResult: answer.ok ? 'reachable' : 'unreachable',
        lastTestReason: answer.ok ? null : (answer.reason ?? 'the peer could not dial this node back'),
        lastTestObservedAddr: answer.observed,
        lastTestAt: at,
      };
      this.host.verdict?.(this.verdict());
    } catch (err) {
      // a peer that does not serve the probe, refuses or times out gives no vote
      this.last = { ...this.last, lastTestResult: 'error', lastTestReason: (err as Error).message.slice(0, 200), lastTestAt: at };
    }
  }

  private vote(peer: PeerKey, ok: boolean): void {
    this.votes = [...this.votes.filter((v) => v.peer !== peer), { peer, ok }].slice(-VOTERS);
  }

  private verdict(): Reachability {
    if (this.votes.length === 0) return 'unknown';
    const yes = this.votes.filter((v) => v.ok).length;
    const no = this.votes.length - yes;
    if (yes !== no) return yes > no ? 'public' : 'private';
    return this.votes[this.votes.length - 1]!.ok ? 'public' : 'private';
  }

  private async serve(peer: PeerKey, data: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    const ports = parsePorts(data);
    if (!ports) throw new PeerRefusal('malformed dial-back request');
    const now = this.host.now();
    const prev = this.servedAt.get(peer);
    if (prev !== undefined && now - prev < PER_PEER_INTERVAL_MS) throw new PeerRefusal('one dial-back per 30 s');
    if (this.serving >= MAX_CONCURRENT) throw new PeerRefusal('busy');
    const remote = this.host.directRemote(peer);
    if (!remote) throw new PeerRefusal('reached only through a relay: no address to dial back');
    this.servedAt.set(peer, now);
    if (this.servedAt.size > 4096) this.servedAt.delete(this.servedAt.keys().next().value!);
    this.serving++;
    try {
      let reason = '';
      for (const port of ports) {
        const observed = `/ip${remote.family}/${remote.ip}/tcp/${port}`;
        const timer = AbortSignal.timeout(DIAL_TIMEOUT_MS);
        try {
          const reached = await this.host.dialBack(`${observed}/p2p/${this.host.peerIdOf(peer)}`, AbortSignal.any([timer, signal]));
          if (reached === peer) return encode({ observed, ok: true });
          reason = 'another peer answered at that address';
        } catch (err) {
          reason = err instanceof PeerNetworkError ? err.message : (err as Error).message;
        }
      }
      return encode({ observed: `/ip${remote.family}/${remote.ip}/tcp/${ports[0]}`, ok: false, reason: reason.slice(0, 200) });
    } finally {
      this.serving--;
    }
  }
}

function parsePorts(data: Uint8Array): number[] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return undefined;
  }
  const ports = (v as { ports?: unknown })?.ports;
  if (!Array.isArray(ports) || ports.length === 0 || ports.length > MAX_PORTS) return undefined;
  if (!ports.every((p) => Number.isInteger(p) && p > 0 && p < 65_536)) return undefined;
  return ports as number[];
}

function parseAnswer(data: Uint8Array): { observed: string; ok: boolean; reason?: string } | undefined {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return undefined;
  }
  const a = v as { observed?: unknown; ok?: unknown; reason?: unknown };
  if (typeof a?.observed !== 'string' || a.observed.length > 200 || typeof a.ok !== 'boolean') return undefined;
  return { observed: a.observed, ok: a.ok, ...(typeof a.reason === 'string' ? { reason: a.reason.slice(0, 200) } : {}) };
}
