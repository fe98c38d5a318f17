/**
 * The first pulls of the contexts auto-follow joins (auto-follow.ts; docs/sync.md "Auto-follow").
 *
 * Two things go wrong when a node joins many contexts at once, right after its own membership op:
 * - a peer serves 8 exchanges of a kind at once and refuses more (network/network-port.ts), so most
 *   first pulls of a big pass would be refused;
 * - a peer that has not applied this node's membership op yet (it is on its way by gossip) refuses
 *   the pull as coming from a non-member.
 * Either way the context would wait for the next heads heartbeat (10 s). So auto-follow keeps at
 * most `max` contexts on their first pull, learns from the `SyncStatus` frames on the bus when a
 * pull ended, and asks a context whose pull ended `backingOff` to sync again soon (a few times,
 * backing off), through the same `POST /contexts/sync` path a client would use. A context whose
 * status says nothing gives its slot back after a deadline.
 */
import type { EventBus } from '../bus.ts';

export const FIRST_PULLS_IN_FLIGHT = 4;
export const FIRST_PULL_DEADLINE_MS = 10_000;
/** delays of the re-syncs after a first pull ended backing off */
export const FIRST_PULL_RETRIES_MS = [300, 1_000, 3_000];

export interface FirstPullsDeps {
  bus: Pick<EventBus, 'subscribe'>;
  /** pulls the context again (ContextService.sync) */
  resync: (contextId: string) => Promise<void>;
  max?: number;
  deadlineMs?: number;
  retriesMs?: readonly number[];
}

interface Pull {
  attempts: number;
  timer: NodeJS.Timeout;
}

export class FirstPulls {
  private readonly pulls = new Map<string, Pull>();
  private waiters: (() => void)[] = [];
  private unsubscribe?: () => void;
  private stopped = false;

  constructor(private readonly d: FirstPullsDeps) {}

  start(): void {
    this.stopped = false;
    this.unsubscribe ??= this.d.bus.subscribe((e) => {
      if (e.type !== 'context' || e.kind !== 'SyncStatus' || !this.pulls.has(e.contextId)) return;
      const state = (e.data.syncState as { state?: unknown } | undefined)?.state;
      if (state === 'idle' || state === 'waitingForPeers') this.release(e.contextId);
      else if (state === 'backingOff') this.retry(e.contextId);
    });
  }

  /** Frees every slot and wakes whoever waits for one. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const id of [...this.pulls.keys()]) this.release(id);
    this.wake();
  }

  get size(): number {
    return this.pulls.size;
  }

  /** Resolves when fewer than `max` contexts are on their first pull (at once when stopped). */
  async slot(): Promise<void> {
    const max = Math.max(1, this.d.max ?? FIRST_PULLS_IN_FLIGHT);
    while (this.pulls.size >= max && !this.stopped) await new Promise<void>((r) => this.waiters.push(r));
  }

  /** Takes a slot for a context about to be joined (before the join: its pull may end first). */
  hold(contextId: string): void {
    if (this.stopped || this.pulls.has(contextId)) return;
    this.pulls.set(contextId, { attempts: 0, timer: this.deadline(contextId) });
  }

  release(contextId: string): void {
    const p = this.pulls.get(contextId);
    if (!p) return;
    clearTimeout(p.timer);
    this.pulls.delete(contextId);
    this.wake();
  }

  private retry(contextId: string): void {
    const p = this.pulls.get(contextId)!;
    const delays = this.d.retriesMs ?? FIRST_PULL_RETRIES_MS;
    if (p.attempts >= delays.length) return this.release(contextId);
    clearTimeout(p.timer);
    p.timer = setTimeout(() => {
      if (this.pulls.get(contextId) !== p) return;
      p.timer = this.deadline(contextId);
      this.d.resync(contextId).catch(() => this.release(contextId));
    }, delays[p.attempts]!);
    p.timer.unref();
    p.attempts++;
  }

  private deadline(contextId: string): NodeJS.Timeout {
    const t = setTimeout(() => this.release(contextId), this.d.deadlineMs ?? FIRST_PULL_DEADLINE_MS);
    t.unref();
    return t;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
