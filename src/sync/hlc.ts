/**
 * A hybrid logical clock (domain.md §2.3 "HLC"): each stamp is the wall clock in milliseconds and a
 * counter, never below any stamp this node made or received, so a node's deltas are ordered even
 * when its clock steps back, and a delta received from a node whose clock runs ahead pushes this
 * node's stamps past it. Remote stamps more than `maxDriftMs` ahead of the local clock are not
 * followed (domain.md: remote clocks may be at most about 5 s ahead). Text form: `<ms>.<counter>`,
 * the counter zero-padded so stamps compare as text too.
 */
export const MAX_DRIFT_MS = 5_000;

export interface Stamp {
  ms: number;
  counter: number;
}

export const formatStamp = (s: Stamp): string => `${s.ms}.${String(s.counter).padStart(6, '0')}`;

export function parseStamp(text: unknown): Stamp | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d{1,15})\.(\d{6})$/.exec(text);
  return m ? { ms: Number(m[1]), counter: Number(m[2]) } : undefined;
}

export class HybridClock {
  private last: Stamp = { ms: 0, counter: 0 };

  constructor(
    private readonly now: () => number,
    private readonly maxDriftMs = MAX_DRIFT_MS,
  ) {}

  /** A stamp for a delta made now. */
  tick(): string {
    const wall = this.now();
    this.last = wall > this.last.ms ? { ms: wall, counter: 0 } : { ms: this.last.ms, counter: this.last.counter + 1 };
    return formatStamp(this.last);
  }

  /** Takes in a received stamp (ignored when malformed or too far ahead of this node's clock). */
  observe(text: string | undefined): void {
    const s = parseStamp(text);
    if (!s || s.ms > this.now() + this.maxDriftMs) return;
    if (s.ms > this.last.ms || (s.ms === this.last.ms && s.counter > this.last.counter)) this.last = s;
  }
}
