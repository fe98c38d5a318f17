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

/**
 * Throttling of runaway contexts (issue #37 item 3; docs/runtime.md "Runaway contexts"): fairness
 * alone lets N runaway contexts keep every worker busy for a deadline at a time, so a healthy call
 * can still wait past its own deadline (a stopped worker's replacement starts slowly on a machine the
 * runaways keep busy). A context whose call is stopped at its deadline runs one call at a time
 * (`strikes` ≥ 1). While any context is throttled, the contexts not in good standing — throttled,
 * or without a call that ended in time lately (a fresh runaway is not known as one before its first
 * stop) — together hold at most all workers but one (the runtime applies this), so the contexts
 * whose calls end in time keep a worker. After `coolAfter` stops in a row a context is cooled
 * down: none of its calls runs
 * (they are refused at once, 503 with Retry-After) for one cool-down, the first twice the deadline
 * and each further one in a row twice the last, up to `maxCoolMs`. A call that ends within its
 * deadline takes one strike off; with none left the context is forgiven its cool-downs. A context
 * quiet for longer than `maxCoolMs` twice over starts afresh.
 */
export interface ThrottlePolicy {
  /** the runtime's deadline (the first cool-down is twice it) */
  deadlineMs: number;
  /** stops at the deadline in a row that start a cool-down (default 2) */
  coolAfter?: number;
  /** the longest cool-down (default 60 s, at least twice the deadline) */
  maxCoolMs?: number;
}

interface Strikes {
  strikes: number;
  /** cool-downs in a row */
  cools: number;
  /** cool-down end (performance.now()), 0 when none */
  until: number;
  last: number;
}

export class Throttle {
  private readonly state = new Map<string, Strikes>();
  /** contexts whose last call ended within its deadline (most recent last, bounded) */
  private readonly good = new Set<string>();
  readonly coolAfter: number;
  readonly maxCoolMs: number;

  constructor(private readonly policy: ThrottlePolicy) {
    this.coolAfter = Math.max(1, policy.coolAfter ?? 2);
    this.maxCoolMs = Math.max(2 * policy.deadlineMs, policy.maxCoolMs ?? 60_000);
  }

  private current(context: string, now: number): Strikes | undefined {
    const s = this.state.get(context);
    if (s && now - s.last > 2 * this.maxCoolMs && now >= s.until) {
      this.state.delete(context);
      return undefined;
    }
    return s;
  }

  /** A call of `context` was stopped at its deadline. Answers the cool-down it started (ms), or 0. */
  stopped(context: string, now = performance.now()): number {
    this.good.delete(context);
    const s = this.current(context, now) ?? { strikes: 0, cools: 0, until: 0, last: now };
    s.strikes++;
    s.last = now;
    let cooled = 0;
    if (s.strikes >= this.coolAfter) {
      cooled = Math.min(this.maxCoolMs, 2 * this.policy.deadlineMs * 2 ** s.cools);
      s.cools++;
      s.until = now + cooled;
      // once back, the next stop at the deadline cools it again (for longer)
      s.strikes = this.coolAfter - 1;
    }
    this.state.delete(context);
    this.state.set(context, s);
    this.bound(now);
    return cooled;
  }

  /** A call of `context` ended within its deadline. */
  finished(context: string, now = performance.now()): void {
    const s = this.current(context, now);
    if (!s || s.strikes <= 1) {
      this.good.delete(context);
      this.good.add(context);
      if (this.good.size > USAGE_KEPT) this.good.delete(this.good.values().next().value!);
    }
    if (!s) return;
    s.strikes = Math.max(0, s.strikes - 1);
    s.last = now;
    if (s.strikes === 0 && now >= s.until) this.state.delete(context);
  }

  /** How long `context` stays cooled down (ms); 0 when it may run. */
  coolingMs(context: string, now = performance.now()): number {
    const s = this.current(context, now);
    return s ? Math.max(0, s.until - now) : 0;
  }

  /** Workers `context` may hold at once, out of `full`: 0 while cooled down, 1 once stopped at its deadline. */
  share(context: string, full: number, now = performance.now()): number {
    const s = this.current(context, now);
    if (!s) return full;
    if (s.until > now) return 0;
    return s.strikes > 0 ? Math.min(1, full) : full;
  }

  /** Whether `context` is throttled now (narrowed to one call, or cooled down). */
  throttled(context: string, now = performance.now()): boolean {
    const s = this.current(context, now);
    return s !== undefined && (s.strikes > 0 || s.until > now);
  }

  /**
   * Whether `context` counts toward the workers kept from the others: it is throttled, or some
   * context is and this one has no call that ended in time lately.
   */
  suspect(context: string, now = performance.now()): boolean {
    if (this.throttled(context, now)) return true;
    return this.state.size > 0 && !this.good.has(context);
  }

  /** contexts throttled now (narrowed or cooled down) */
  get size(): number {
    return this.state.size;
  }

  /** keeps at most USAGE_KEPT contexts: the ones not heard of longest go first, unless cooling */
  private bound(now: number): void {
    if (this.state.size <= USAGE_KEPT) return;
    for (const [context, s] of this.state) {
      if (this.state.size <= USAGE_KEPT) return;
      if (s.until <= now) this.state.delete(context);
    }
  }
}
