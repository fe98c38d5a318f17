/**
 * Why a remote delta's merge failed, and the retries of one that failed for a passing reason
 * (issue #22 item 6; docs/sync.md "Failed merges").
 *
 * A merge (`__calimero_sync_next`) that fails because of the guest itself — a trap, a panic, an
 * application error, a host function refusing what it asked — fails the same way every time on
 * every node: that delta is quarantined at once (apply.ts). One that failed because of this node's
 * condition — the call's deadline or the wait for a worker passed (overload), the worker died or was
 * replaced, the runtime stopped, the store could not be read — may well succeed later, so it is
 * retried with back-off, a bounded number of times within a bounded time; past the bound it is
 * quarantined like a deterministic failure (a guest that loops past its deadline on that delta
 * fails this way every time), with a log line and the `exhausted` count.
 */
import type { DeltaRecord } from '../contexts/index.ts';
import type { CallFailure } from '../runtime/index.ts';

export type FailureClass = 'transient' | 'deterministic';

/**
 * The runtime reports a worker that died, was replaced or lost its module as `HostError` with a
 * `host panicked:` message (src/runtime/runtime.ts); every other `HostError` is a host function
 * refusing the guest's request (limits, bad memory access, bad UTF-8), which the same delta repeats.
 */
const WORKER_LOST = /^host panicked:/;

/** Whether a failed merge may succeed if tried again. */
export function classifyApplyFailure(f: Pick<CallFailure, 'kind' | 'message'>): FailureClass {
  switch (f.kind) {
    case 'Deadline': // the call's own deadline, or no worker free in time (overload)
    case 'Aborted': // the runtime stopped under the call
      return 'transient';
    case 'HostError':
      return WORKER_LOST.test(f.message) ? 'transient' : 'deterministic';
    default:
      return 'deterministic';
  }
}

export interface RetryPolicy {
  /** attempts after the first failure before the delta is quarantined */
  attempts: number;
  /** the first retry's delay; each next one doubles, up to `maxDelayMs` */
  firstDelayMs: number;
  maxDelayMs: number;
  /** no retry later than this after the first failure */
  totalMs: number;
  /** deltas waiting for a retry per context; past it a failed delta is dropped (a pull brings it again) */
  maxWaiting: number;
}

export const APPLY_RETRY: RetryPolicy = { attempts: 5, firstDelayMs: 1_000, maxDelayMs: 30_000, totalMs: 5 * 60_000, maxWaiting: 1_024 };

/** Counts since start (the `hearth_sync_apply_failures_total` metric). */
export interface ApplyFailureStats {
  /** retries scheduled */
  retried: number;
  /** deltas applied by a retry */
  recovered: number;
  /** deltas quarantined because their retries ran out */
  exhausted: number;
  /** deltas quarantined at once (a deterministic failure) */
  quarantined: number;
}

interface Waiting {
  delta: DeltaRecord;
  from?: string;
  attempts: number;
  firstAt: number;
  /** set while the next attempt is not due */
  timer?: NodeJS.Timeout;
}

/** The next attempt; or, past the bound, how many retries were made; or why the delta is let go. */
export type Scheduled = { attempt: number; delayMs: number } | { exhausted: number } | 'full' | 'stopped';

export class ApplyRetries {
  private readonly waiting = new Map<string, Map<string, Waiting>>();
  private stopped = false;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly now: () => number,
    /** runs the next attempt (the applier's `receive`) */
    private readonly fire: (delta: DeltaRecord, from: string | undefined) => void,
    readonly stats: ApplyFailureStats,
  ) {}

  /**
   * After a transient failure: schedules the next attempt, or answers why not — `exhausted` (the
   * caller quarantines), `full` or `stopped` (the delta is let go; peers advertise it again).
   */
  schedule(delta: DeltaRecord, from: string | undefined): Scheduled {
    if (this.stopped) return 'stopped';
    let inContext = this.waiting.get(delta.contextId);
    let w = inContext?.get(delta.id);
    if (!w) {
      if ((inContext?.size ?? 0) >= this.policy.maxWaiting) return 'full';
      if (!inContext) this.waiting.set(delta.contextId, (inContext = new Map()));
      inContext.set(delta.id, (w = { delta, from, attempts: 0, firstAt: this.now() }));
    }
    w.attempts += 1;
    const elapsed = this.now() - w.firstAt;
    if (w.attempts > this.policy.attempts || elapsed >= this.policy.totalMs) {
      this.drop(delta.contextId, delta.id);
      this.stats.exhausted++;
      return { exhausted: w.attempts - 1 };
    }
    const delayMs = Math.max(0, Math.min(this.policy.maxDelayMs, this.policy.firstDelayMs * 2 ** (w.attempts - 1), this.policy.totalMs - elapsed));
    const entry = w;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      this.fire(entry.delta, entry.from);
    }, delayMs);
    entry.timer.unref();
    this.stats.retried++;
    return { attempt: w.attempts, delayMs };
  }

  /** Whether the delta waits for its next attempt (an arrival meanwhile does not jump the back-off). */
  waits(contextId: string, id: string): boolean {
    return this.waiting.get(contextId)?.get(id)?.timer !== undefined;
  }

  /** Whether the delta failed transiently and is still being retried. */
  holds(contextId: string, id: string): boolean {
    return this.waiting.get(contextId)?.has(id) ?? false;
  }

  /** How many deltas of the context are being retried. */
  count(contextId: string): number {
    return this.waiting.get(contextId)?.size ?? 0;
  }

  /** The delta was applied: a retry of it succeeded if it was being retried. */
  applied(contextId: string, id: string): boolean {
    const was = this.drop(contextId, id);
    if (was) this.stats.recovered++;
    return was;
  }

  /** Stops retrying the delta (held by other means). */
  cancel(contextId: string, id: string): boolean {
    return this.drop(contextId, id);
  }

  forget(contextId: string): void {
    for (const w of this.waiting.get(contextId)?.values() ?? []) clearTimeout(w.timer);
    this.waiting.delete(contextId);
  }

  /** No retry after this (the node stops); deltas waiting are let go, not quarantined. */
  stop(): void {
    this.stopped = true;
    for (const contextId of [...this.waiting.keys()]) this.forget(contextId);
  }

  private drop(contextId: string, id: string): boolean {
    const inContext = this.waiting.get(contextId);
    const w = inContext?.get(id);
    if (!w) return false;
    clearTimeout(w.timer);
    inContext!.delete(id);
    if (inContext!.size === 0) this.waiting.delete(contextId);
    return true;
  }
}
