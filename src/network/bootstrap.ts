/**
 * Keeps the configured bootstrap peers connected (issue #12 §1; domain.md §1.2 `[bootstrap] nodes`):
 * each address is dialed at start and, whenever its peer is not connected, redialed with
 * exponential backoff (1 s doubling to 60 s by default, ±20 % jitter so restarted nodes do not
 * redial in step). A connection that lasted `stableMs` resets the backoff and is redialed at once
 * when it drops; a shorter one (a peer that accepts and hangs up) waits out the backoff like a
 * failed dial. A relayed address (`/p2p-circuit`) counts as stable after {@link RELAYED_STABLE_MS}:
 * the relay ends each circuit at its data or duration limit by design, and a circuit that carried a
 * batch before it was cut is progress, not a peer hanging up (issue #24: with the backoff doubling
 * on every cut, a sync over a small relay limit waited up to a minute between batches). A
 * connection the network reports as having made progress ({@link Bootstrapper.progressed}: a relayed
 * one that used up most of its data allowance) is stable however short it was: on a fast path a
 * 256 KiB circuit is spent within a few hundred milliseconds, and judged by its length alone every
 * cut doubled the backoff again (the relay-limit e2e test: redials 7, 14, then 35 s apart, and B
 * gave up on A). `stop()` cancels every wait and dial.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { PeerEvent, PeerKey } from './network-port.ts';
import { deadline } from './deadline.ts';

export interface RedialPolicy {
  initialMs: number;
  maxMs: number;
  /** deadline of one dial */
  dialTimeoutMs: number;
  /** a connection that lasted this long resets the backoff */
  stableMs: number;
}

/** a relayed connection that lasted this long resets the backoff (see the header) */
export const RELAYED_STABLE_MS = 1_000;

export const DEFAULT_REDIAL: RedialPolicy = { initialMs: 1_000, maxMs: 60_000, dialTimeoutMs: 10_000, stableMs: 10_000 };

export interface BootstrapDeps {
  /** dials the address; resolves with the peer it reached */
  dial(address: string, signal: AbortSignal): Promise<PeerKey>;
  connected(peer: PeerKey): boolean;
  onPeer(listener: (e: PeerEvent) => void): () => void;
  log: Logger;
  /** injectable for tests: [0, 1), the clock, and a wait that ends early when the signal aborts */
  random?: () => number;
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> => sleep(ms, undefined, { signal }).catch(() => undefined);

export interface BootstrapPeer {
  address: string;
  /** the peer the address names (its `/p2p/` part), when it names one */
  peer?: PeerKey;
}

export class Bootstrapper {
  private controller: AbortController | undefined;
  private loops: Promise<void>[] = [];
  /** the mark of each kept peer's newest connection that ended after making progress (see `progressed`) */
  private readonly progress = new Map<PeerKey, number>();
  /** a counter ordering progress marks after connections (the clock may not move between the two) */
  private marks = 0;
  /** peers a loop is waiting on the disconnection of, with how many loops (only these record progress) */
  private readonly watched = new Map<PeerKey, number>();

  constructor(
    private readonly peers: BootstrapPeer[],
    private readonly deps: BootstrapDeps,
    private readonly policy: RedialPolicy = DEFAULT_REDIAL,
  ) {}

  start(): void {
    if (this.controller) return;
    const controller = (this.controller = new AbortController());
    this.loops = this.peers.map((p) => this.keep(p, controller.signal));
  }

  /** Keeps one more peer connected from now on (at start when not started yet); an address kept already is ignored. */
  add(target: BootstrapPeer): void {
    if (this.peers.some((p) => p.address === target.address)) return;
    this.peers.push(target);
    if (this.controller) this.loops.push(this.keep(target, this.controller.signal));
  }

  /**
   * The network saw a connection to `peer` end after carrying what it could (a relayed connection
   * cut at its relay's data limit): the disconnection that follows resets the backoff, as a stable
   * connection's does. Told before or with the peer's disconnection (libp2p closes the connection,
   * then the peer's last connection is gone).
   */
  progressed(peer: PeerKey | undefined): void {
    if (peer !== undefined && this.watched.has(peer)) this.progress.set(peer, ++this.marks);
  }

  async stop(): Promise<void> {
    this.controller?.abort();
    this.controller = undefined;
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async keep(target: BootstrapPeer, signal: AbortSignal): Promise<void> {
    const { log } = this.deps;
    let peer = target.peer;
    let delay = this.policy.initialMs;
    const stableMs = target.address.includes('/p2p-circuit') ? Math.min(this.policy.stableMs, RELAYED_STABLE_MS) : this.policy.stableMs;
    const backoff = async () => {
      const jitter = 0.8 + 0.4 * (this.deps.random ?? Math.random)();
      await (this.deps.sleep ?? abortableSleep)(Math.round(delay * jitter), signal);
      delay = Math.min(delay * 2, this.policy.maxMs);
    };
    while (!signal.aborted) {
      if (peer === undefined || !this.deps.connected(peer)) {
        const timer = deadline(this.policy.dialTimeoutMs);
        try {
          peer = await this.deps.dial(target.address, AbortSignal.any([signal, timer.signal]));
          log.debug({ peer, address: target.address }, 'network: bootstrap peer connected');
        } catch (err) {
          if (signal.aborted) return;
          log.debug({ address: target.address, retryInMs: delay, err: (err as Error).message }, 'network: bootstrap dial failed');
          await backoff();
          continue;
        } finally {
          timer.clear();
        }
      }
      const now = this.deps.now ?? Date.now;
      const since = now();
      const mark = this.marks;
      this.watched.set(peer, (this.watched.get(peer) ?? 0) + 1);
      try {
        await this.disconnection(peer, signal);
        await new Promise((r) => setImmediate(r)); // the close's other listeners (`progressed`) first
      } finally {
        const n = (this.watched.get(peer) ?? 1) - 1;
        if (n > 0) this.watched.set(peer, n);
        else this.watched.delete(peer);
      }
      // not deleted: another loop may keep the same peer at another address
      const progressed = (this.progress.get(peer) ?? 0) > mark;
      if (progressed || now() - since >= stableMs) delay = this.policy.initialMs;
      else await backoff();
    }
  }

  /** Resolves when `peer` disconnects (at once when it already has) or the signal aborts. */
  private disconnection(peer: PeerKey, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        off();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const off = this.deps.onPeer((e) => {
        if (e.type === 'disconnected' && e.peer === peer) done();
      });
      signal.addEventListener('abort', done, { once: true });
      if (signal.aborted || !this.deps.connected(peer)) done();
    });
  }
}
