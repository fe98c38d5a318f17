/**
 * What a runtime worker may hold, and when an idle one goes (issue #22: memory idle < 100 MB, after
 * load < 150 MB). Used by the pool in runtime.ts.
 *
 * - V8's young generation of a worker is capped ({@link WORKER_RESOURCE_LIMITS}): by default each
 *   worker grew its semi-spaces to 16 MiB each under load (heapTotal ~46 MB per worker for ~8–19 MB
 *   used, bench/restart.ts), and kept them. A guest call allocates little on the JavaScript heap
 *   (its data lives in the instance's linear memory), so a small nursery costs a few more
 *   scavenges, each short.
 * - A worker that has been free for {@link DEFAULT_IDLE_RETIRE_MS} is terminated, down to
 *   {@link DEFAULT_KEEP_WORKERS}: a load's extra workers (the pool grows to one per core and one
 *   more) give back their heaps, compiled code and kept instances once the load is over. One is
 *   kept, warm, so a call after a pause does not pay a worker's start and its module's instance
 *   (the pool starts workers again on demand when calls wait). A node that never ran a call holds
 *   none (issue #14).
 */

/**
 * A worker free this long lets its kept instances go (instances.ts `release`) and collects: their
 * linear memories (grown by the calls of a load) and snapshots, ~5–7 MB for four modules in
 * bench/restart.ts. The next call on a module instantiates it again (about a millisecond, against
 * the ~55 ms a worker's start costs, which is why the worker itself is kept: docs/decisions.md).
 */
export const INSTANCE_RELEASE_MS = 15_000;

/** `resourceLimits` of every runtime worker. */
export const WORKER_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 6 } as const;
/** A worker free this long is retired (config-free: the runtime's `idleRetireMs` option). */
export const DEFAULT_IDLE_RETIRE_MS = 5_000;
/** Workers left when the others retire. */
export const DEFAULT_KEEP_WORKERS = 1;

export interface IdleRetirementOptions<S> {
  idleMs: number;
  keep: number;
  /** the pool's workers now */
  slots: () => readonly S[];
  /** free (not running a call, loaded) */
  isFree: (slot: S) => boolean;
  /** terminates `slot` and takes it out of the pool */
  retire: (slot: S) => void;
  now?: () => number;
}

/** Retires workers free for longer than `idleMs`, the longest idle first, keeping `keep`. */
export class IdleRetirement<S extends object> {
  private readonly lastUsed = new WeakMap<S, number>();
  private timer?: ReturnType<typeof setInterval>;
  /** workers retired since start (`hearth_runtime_workers_retired_total`) */
  retired = 0;
  private readonly now: () => number;

  constructor(private readonly opts: IdleRetirementOptions<S>) {
    this.now = opts.now ?? (() => performance.now());
  }

  start(): void {
    if (this.timer || !(this.opts.idleMs > 0)) return;
    // a sweep every half the idle time: a worker goes between idleMs and 1.5 × idleMs after its last call
    this.timer = setInterval(() => this.sweep(), Math.max(10, Math.floor(this.opts.idleMs / 2)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** `slot` finished a call (or its start) now. */
  touched(slot: S): void {
    this.lastUsed.set(slot, this.now());
  }

  /** Retires what has been idle too long; answers how many went. */
  sweep(): number {
    const now = this.now();
    const slots = this.opts.slots();
    const idle = slots
      .filter((s) => this.opts.isFree(s) && now - (this.lastUsed.get(s) ?? now) >= this.opts.idleMs)
      .sort((a, b) => this.lastUsed.get(a)! - this.lastUsed.get(b)!);
    const go = Math.min(idle.length, Math.max(0, slots.length - this.opts.keep));
    for (const slot of idle.slice(0, go)) {
      this.lastUsed.delete(slot);
      this.opts.retire(slot);
      this.retired++;
    }
    return go;
  }
}
