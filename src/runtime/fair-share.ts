/**
 * Fair scheduling of the worker pool across contexts (issue #23 §4; docs/decisions.md "Fair
 * scheduling"): which waiting call a freed worker goes to. The waiting call whose context holds the
 * fewest workers; ties to the context that used the least worker time recently (each call charged
 * from its grant until its worker frees, halving every half-life — a runaway's calls each used a
 * whole deadline); then the longest waiting. With every running call ending or stopped within one
 * deadline, a call of a context that holds no worker and has used less than the runaways is first
 * in line for the next worker that frees: served within its normal time plus one deadline.
 */

export interface FairWaiter {
  context: string;
  /** when it began waiting (performance.now()) */
  since: number;
}

/** contexts whose recent worker time is kept at most (the least used are forgotten first) */
const USAGE_KEPT = 4096;

export class FairShare {
  /** per context: worker milliseconds as of `at`, decaying */
  private readonly usage = new Map<string, { ms: number; at: number }>();

  /** @param halfLifeMs how fast a context's recent worker time is forgotten (the runtime's deadline) */
  constructor(private readonly halfLifeMs: number) {}

  /** `context`'s recent worker time at `now`, decayed. */
  usedMs(context: string, now = performance.now()): number {
    const u = this.usage.get(context);
    return u ? u.ms * 2 ** (-(now - u.at) / this.halfLifeMs) : 0;
  }

  /** Adds the worker time a call of `context` took. */
  charge(context: string, ms: number): void {
    const now = performance.now();
    const used = this.usedMs(context, now) + ms;
    this.usage.delete(context);
    this.usage.set(context, { ms: used, at: now });
    if (this.usage.size <= USAGE_KEPT) return;
    let least: [string, number] | undefined;
    for (const key of this.usage.keys()) {
      const u = this.usedMs(key, now);
      if (!least || u < least[1]) least = [key, u];
    }
    this.usage.delete(least![0]);
  }

  /**
   * The waiter the next free worker goes to, among those `eligible` says may run (under their
   * context's share); `held` is the workers a context holds now. `waiters` is in arrival order.
   */
  pick<W extends FairWaiter>(waiters: readonly W[], held: (context: string) => number, eligible: (context: string) => boolean): W | undefined {
    const now = performance.now();
    let best: { waiter: W; held: number; used: number } | undefined;
    for (const waiter of waiters) {
      if (!eligible(waiter.context)) continue;
      const h = held(waiter.context);
      const used = this.usedMs(waiter.context, now);
      if (!best || h < best.held || (h === best.held && (used < best.used || (used === best.used && waiter.since < best.waiter.since)))) {
        best = { waiter, held: h, used };
      }
    }
    return best?.waiter;
  }
}
