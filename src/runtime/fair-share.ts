/**
 * Fair scheduling of the worker pool across contexts (issue #23 §4, issue #37 item 3;
 * docs/decisions.md "Fair scheduling", "Throttling runaway contexts"): which waiting call a freed
 * worker goes to, and how many workers a context may hold.
 *
 * Order: the waiting call whose context holds the fewest workers; ties to the context that used the
 * least worker time recently (each call charged from its grant until its worker frees, halving
 * every half-life — a runaway's calls each used a whole deadline); then the longest waiting. With
 * every running call ending or stopped within one deadline, a call of a context that holds no
 * worker and has used less than the runaways is first in line for the next worker that frees.
 *
 * Throttle: a context whose call was stopped at its deadline holds one worker at a time; after
 * `coolAfter` stops in a row it cools down (its calls refused at once, 503 with Retry-After) for
 * `firstCoolMs`, doubling with each further stop up to `maxCoolMs`. A cool-down always ends, and
 * then the context gets its one worker again like any other (so a runaway is slowed, never shut out
 * for good); one call that completes in time lifts the throttle. Throttled contexts together never
 * take the pool's last worker: an unthrottled context always finds one free or freeing.
 */

export interface FairWaiter {
  context: string;
  /** when it began waiting (performance.now()) */
  since: number;
}

export interface ThrottlePolicy {
  /** stops at the deadline in a row after which a context cools down */
  coolAfter: number;
  /** a throttled context that had no stop and no cool-down for this long starts over */
  forgetMs: number;
  /** the first cool-down */
  firstCoolMs: number;
  /** the longest cool-down (each further stop doubles it up to this) */
  maxCoolMs: number;
}

/**
 * The throttle for a runtime whose calls have a deadline of `deadlineMs`: cool-downs of one
 * deadline, doubling up to eight; forgotten after 64 quiet deadlines (with many runaways sharing
 * the pool, one runaway's turns come minutes apart).
 */
export const throttlePolicy = (deadlineMs: number): ThrottlePolicy => ({ coolAfter: 2, forgetMs: 64 * deadlineMs, firstCoolMs: deadlineMs, maxCoolMs: 8 * deadlineMs });

/** How a call ended, for the throttle: stopped at its deadline, done in time, or neither (its worker failed). */
export type CallEnd = 'stopped' | 'done';

/** contexts whose recent worker time (or throttle) is kept at most (the least used, the oldest, are forgotten first) */
const USAGE_KEPT = 4096;

interface Strikes {
  /** stops at the deadline in a row */
  stops: number;
  /** end of the cool-down (0: none) */
  until: number;
  /** the last stop */
  last: number;
}

export class FairShare {
  /** per context: worker milliseconds as of `at`, decaying */
  private readonly usage = new Map<string, { ms: number; at: number }>();
  /** per throttled context: its stops in a row and cool-down */
  private readonly strikes = new Map<string, Strikes>();
  /** stops at the deadline counted since start, and cool-downs begun */
  readonly throttled = { stops: 0, coolDowns: 0 };

  /**
   * @param halfLifeMs how fast a context's recent worker time is forgotten (the runtime's deadline)
   * @param policy the throttle (default `throttlePolicy(halfLifeMs)`)
   */
  constructor(
    private readonly halfLifeMs: number,
    private readonly policy: ThrottlePolicy = throttlePolicy(halfLifeMs),
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** `context`'s recent worker time at `now`, decayed. */
  usedMs(context: string, now = this.now()): number {
    const u = this.usage.get(context);
    return u ? u.ms * 2 ** (-(now - u.at) / this.halfLifeMs) : 0;
  }

  /** Adds the worker time a call of `context` took, and how it ended (the throttle). */
  charge(context: string, ms: number, end?: CallEnd): void {
    const now = this.now();
    if (end) this.ended(context, end, now);
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
   * Workers `context` may hold now, `normal` being an unthrottled context's share: 0 while it cools
   * down, 1 once a call of it was stopped at its deadline (until one completes in time).
   */
  share(context: string, normal: number): number {
    const s = this.current(context, this.now());
    if (!s) return normal;
    return s.until > this.now() ? 0 : Math.min(1, normal);
  }

  /**
   * Whether `context`, holding `held` workers, may take one more: under its share (`share`), and a
   * throttled context only while the throttled ones together hold fewer than `normal` (the pool
   * but one). `holding`: the workers each context holds now.
   */
  mayTake(context: string, held: number, normal: number, holding: ReadonlyMap<string, number>): boolean {
    if (held >= this.share(context, normal)) return false;
    if (!this.current(context, this.now())) return true;
    let throttledHeld = 0;
    for (const [c, n] of holding) if (this.strikes.has(c)) throttledHeld += n;
    return throttledHeld < normal;
  }

  /** How long `context` still cools down (0: it does not). */
  coolingMs(context: string): number {
    const now = this.now();
    const s = this.current(context, now);
    return s ? Math.max(0, s.until - now) : 0;
  }

  /** Contexts throttled now (held to one worker or cooling down). */
  throttledContexts(): number {
    const now = this.now();
    let n = 0;
    for (const key of [...this.strikes.keys()]) if (this.current(key, now)) n++;
    return n;
  }

  /**
   * The waiter the next free worker goes to, among those `eligible` says may run (under their
   * context's share); `held` is the workers a context holds now. `waiters` is in arrival order.
   * A context's figures are worked out once per pick, not once per waiter (issue #33: 32 calls of
   * one context waiting made each freed worker decay the same usage 31 times).
   */
  pick<W extends FairWaiter>(waiters: readonly W[], held: (context: string) => number, eligible: (context: string) => boolean): W | undefined {
    const now = this.now();
    const figures = new Map<string, { held: number; used: number } | null>();
    let best: { waiter: W; held: number; used: number } | undefined;
    for (const waiter of waiters) {
      let f = figures.get(waiter.context);
      if (f === undefined) {
        f = eligible(waiter.context) ? { held: held(waiter.context), used: this.usedMs(waiter.context, now) } : null;
        figures.set(waiter.context, f);
      }
      if (f === null) continue;
      const { held: h, used } = f;
      if (!best || h < best.held || (h === best.held && (used < best.used || (used === best.used && waiter.since < best.waiter.since)))) {
        best = { waiter, held: h, used };
      }
    }
    return best?.waiter;
  }

  private ended(context: string, end: CallEnd, now: number): void {
    if (end === 'done') {
      this.strikes.delete(context);
      return;
    }
    this.throttled.stops++;
    const s = this.current(context, now) ?? { stops: 0, until: 0, last: now };
    s.stops++;
    s.last = now;
    if (s.stops >= this.policy.coolAfter) {
      const cool = Math.min(this.policy.maxCoolMs, this.policy.firstCoolMs * 2 ** (s.stops - this.policy.coolAfter));
      // never shortened by a later stop
      s.until = Math.max(s.until, now + cool);
      this.throttled.coolDowns++;
    }
    this.strikes.delete(context);
    this.strikes.set(context, s);
    if (this.strikes.size > USAGE_KEPT) this.strikes.delete(this.strikes.keys().next().value!);
  }

  /** `context`'s strikes, forgotten once it has been quiet (no stop, no cool-down) for `forgetMs`. */
  private current(context: string, now: number): Strikes | undefined {
    const s = this.strikes.get(context);
    if (!s) return undefined;
    if (s.until <= now && now - Math.max(s.last, s.until) > this.policy.forgetMs) {
      this.strikes.delete(context);
      return undefined;
    }
    return s;
  }
}
