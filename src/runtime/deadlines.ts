/**
 * The runtime's deadlines under one timer (issue #33): each call had a timer for its wait for a
 * worker and another for its run, set and cleared on every call. Here a deadline is an entry in a
 * set and one timer is armed for the earliest; a call that ends in time only leaves the set. When
 * the armed time comes, the entries due fire and the timer is armed for the next earliest. Calls
 * mostly share one budget, so deadlines arrive in order and the timer is re-armed only when it
 * fires or the set empties (then it is cleared, so an idle runtime holds no timer).
 */
import { performance } from 'node:perf_hooks';

interface Entry {
  at: number;
  fire: () => void;
  /** false once cancelled: a due entry cancelled by another's work in the same sweep does not fire */
  live: boolean;
}

export class Deadlines {
  private readonly entries = new Set<Entry>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedAt = Infinity;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Runs `fire` once `ms` have passed, unless cancelled first; answers the cancel (idempotent). */
  add(ms: number, fire: () => void): () => void {
    const entry: Entry = { at: this.now() + ms, fire, live: true };
    this.entries.add(entry);
    if (entry.at < this.armedAt) this.arm(entry.at);
    return () => {
      entry.live = false;
      if (this.entries.delete(entry) && this.entries.size === 0) this.disarm();
    };
  }

  /** deadlines pending (tests) */
  get size(): number {
    return this.entries.size;
  }

  /** Forgets every deadline without firing it. */
  clear(): void {
    for (const e of this.entries) e.live = false;
    this.entries.clear();
    this.disarm();
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, at - this.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
  }

  private sweep(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.now();
    const due: Entry[] = [];
    let next = Infinity;
    for (const e of this.entries) {
      if (e.at <= now) due.push(e);
      else if (e.at < next) next = e.at;
    }
    for (const e of due) this.entries.delete(e);
    if (next < Infinity) this.arm(next);
    // fired after the set is settled: a deadline's work may add or cancel others
    for (const e of due) {
      if (!e.live) continue;
      e.live = false;
      e.fire();
    }
  }
}
