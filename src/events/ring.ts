/**
 * A bounded replay buffer of numbered frames (docs/events.md "Resume contract"): frame numbers
 * start at 1 and grow by one per push; only the newest `capacity` are kept. Backs `Last-Event-ID`
 * resume, and doubles as a connection's send queue (a connection remembers how far it has sent).
 */
export class ReplayRing {
  private readonly slots: (string | undefined)[];
  private newest = 0;
  private held = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.slots = new Array(capacity);
  }

  /** Appends a frame; returns its number. */
  push(data: string): number {
    this.newest += 1;
    this.slots[this.newest % this.capacity] = data;
    if (this.held < this.capacity) this.held += 1;
    return this.newest;
  }

  /** Number of the newest frame (0 before the first push). */
  get last(): number {
    return this.newest;
  }

  /** Number of the oldest frame still held (`last + 1` when empty). */
  get first(): number {
    return this.newest - this.held + 1;
  }

  /** The frame numbered `n`, or undefined when it was never pushed or has been dropped. */
  get(n: number): string | undefined {
    if (n < this.first || n > this.newest) return undefined;
    return this.slots[n % this.capacity];
  }
}
