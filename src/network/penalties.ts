/**
 * Penalties and bans (issue #12 §6): every `penalize` is counted per reason; a peer that collects
 * `threshold` penalties within `windowMs` is banned for `banMs` (the network disconnects it and
 * refuses its connections until then). Shared by the libp2p and in-memory networks so both ban
 * alike. Memory is bounded: a peer keeps at most `threshold` timestamps, and peers whose penalties
 * have all aged out of the window are swept.
 */
import type { PeerKey, PenaltyReason } from './network-port.ts';

export interface BanPolicy {
  /** penalties within `windowMs` that ban a peer */
  threshold: number;
  windowMs: number;
  /** how long a ban lasts */
  banMs: number;
}

/** 20 penalties within a minute ban for ten minutes (docs/network.md "Penalties and bans"). */
export const DEFAULT_BAN_POLICY: BanPolicy = { threshold: 20, windowMs: 60_000, banMs: 10 * 60_000 };

/** Beyond this many tracked peers, a penalty sweeps peers whose penalties aged out. */
const SWEEP_AT = 1024;

export class PenaltyBox {
  private readonly counts = new Map<PenaltyReason, number>();
  /** per peer, the times of its recent penalties (oldest first, at most `threshold`) */
  private readonly recent = new Map<PeerKey, number[]>();
  private readonly bans = new Map<PeerKey, number>();

  constructor(
    private readonly policy: BanPolicy = DEFAULT_BAN_POLICY,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one penalty; true when it is the one that bans the peer (the caller disconnects it). */
  record(peer: PeerKey, reason: PenaltyReason): boolean {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    if (this.isBanned(peer)) return false;
    const t = this.now();
    const since = t - this.policy.windowMs;
    const times = (this.recent.get(peer) ?? []).filter((x) => x > since);
    times.push(t);
    if (times.length > this.policy.threshold) times.shift();
    if (times.length >= this.policy.threshold) {
      this.recent.delete(peer);
      this.bans.set(peer, t + this.policy.banMs);
      return true;
    }
    this.recent.set(peer, times);
    if (this.recent.size > SWEEP_AT) this.sweep(since);
    return false;
  }

  isBanned(peer: PeerKey): boolean {
    const until = this.bans.get(peer);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.bans.delete(peer);
    return false;
  }

  penalties(): Partial<Record<PenaltyReason, number>> {
    return Object.fromEntries(this.counts);
  }

  banned(): { peer: PeerKey; until: number }[] {
    const t = this.now();
    const out: { peer: PeerKey; until: number }[] = [];
    for (const [peer, until] of this.bans) {
      if (until > t) out.push({ peer, until });
      else this.bans.delete(peer);
    }
    return out;
  }

  private sweep(since: number): void {
    for (const [peer, times] of this.recent) if (times[times.length - 1]! <= since) this.recent.delete(peer);
  }
}
