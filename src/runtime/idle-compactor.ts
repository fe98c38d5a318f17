/**
 * A full garbage collection when the thread falls idle after work (issue #22: memory idle < 100 MB,
 * after load < 150 MB; docs/performance.md "Memory goals (issue #22, 2026-11-27, second pass)").
 *
 * Why: V8 collects when something allocates. A node that falls idle after a load allocates next to
 * nothing, so the load's garbage (~30 MB of the main thread's old space) and the young generation
 * V8 grew for it (semi-spaces of 16 MiB each) stay resident for good. V8 gives the young generation
 * back only on a collection that finds the allocation rate low, and it reckons that rate over the
 * last ~5 s of collections: so the first collection after a load frees the garbage, and a second
 * one, a tick (≥ 6 s) later with the thread still idle, shrinks the young generation (bench:
 * 117 → 57 MB in a plain Node 20 process).
 *
 * When: every {@link DEFAULT_COMPACT_TICK_MS}, if the event loop was busy less than
 * {@link DEFAULT_IDLE_UTILIZATION} of the tick (never while busy) and the heap grew since the last
 * compaction by {@link DEFAULT_GROWTH_BYTES} (used, i.e. garbage not collected, or total), a
 * compaction of {@link COMPACT_ROUNDS} collections starts, one per idle tick. A thread that stays
 * idle and does not grow is never collected again.
 *
 * V8's `gc` function is only given to JavaScript with `--expose-gc`; {@link obtainGc} sets that flag
 * at run time and takes the function from a new context (works on Node 20 and 22; the flag applies
 * to contexts made after it is set). Without it (a V8 refusing), the compactor does nothing.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const DEFAULT_COMPACT_TICK_MS = 6_000;
/** event-loop utilisation under which a tick counts as idle */
export const DEFAULT_IDLE_UTILIZATION = 0.05;
/** heap growth since the last compaction that makes one worth it */
export const DEFAULT_GROWTH_BYTES = 8 * 1024 * 1024;
/** collections per compaction: the second is the one that shrinks the young generation */
export const COMPACT_ROUNDS = 2;

export type GcFunction = () => void;

let cachedGc: GcFunction | null | undefined;

/** V8's `gc()`, obtained without a command-line flag; null if this V8 does not give it. */
export function obtainGc(): GcFunction | null {
  if (cachedGc !== undefined) return cachedGc;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    cachedGc = typeof gc === 'function' ? (gc as GcFunction) : null;
  } catch {
    cachedGc = null;
  }
  return cachedGc;
}

export interface HeapFigures {
  used: number;
  total: number;
}

export interface IdleCompactorOptions {
  tickMs?: number;
  idleUtilization?: number;
  growthBytes?: number;
  /** injected for tests; defaults to {@link obtainGc} */
  gc?: GcFunction | null;
  /** injected for tests; defaults to v8.getHeapStatistics */
  heap?: () => HeapFigures;
  /** utilisation of the event loop since the previous call, 0..1; injected for tests */
  utilization?: () => number;
}

/** Runs {@link COMPACT_ROUNDS} full collections when the thread is idle after its heap grew. */
export class IdleCompactor {
  private readonly tickMs: number;
  private readonly idleUtilization: number;
  private readonly growthBytes: number;
  private readonly gc: GcFunction | null;
  private readonly heap: () => HeapFigures;
  private readonly utilization: () => number;
  private timer?: ReturnType<typeof setInterval>;
  /** heap right after the last compaction (or at start) */
  private base: HeapFigures;
  /** collections left in the compaction under way */
  private roundsLeft = 0;
  /** collections run since start (`hearth_idle_collections_total`) */
  collections = 0;

  constructor(opts: IdleCompactorOptions = {}) {
    this.tickMs = opts.tickMs ?? DEFAULT_COMPACT_TICK_MS;
    this.idleUtilization = opts.idleUtilization ?? DEFAULT_IDLE_UTILIZATION;
    this.growthBytes = opts.growthBytes ?? DEFAULT_GROWTH_BYTES;
    this.gc = opts.gc === undefined ? obtainGc() : opts.gc;
    this.heap = opts.heap ?? heapFigures;
    this.utilization = opts.utilization ?? eventLoopUtilization();
    this.base = this.heap();
  }

  /** whether collections can run here (V8 gave its gc function) */
  get available(): boolean {
    return this.gc !== null;
  }

  start(): void {
    if (this.timer || !this.gc || !(this.tickMs > 0)) return;
    this.utilization(); // the first tick measures from now
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.roundsLeft = 0;
  }

  /** `hearth_idle_collections_total` for /metrics. */
  series(): Array<{ name: string; help: string; type: 'counter'; read: () => Array<{ value: number }> }> {
    return [{ name: 'hearth_idle_collections_total', help: 'Full garbage collections run when the main thread fell idle after its heap grew', type: 'counter', read: () => [{ value: this.collections }] }];
  }

  /** One tick: answers whether it collected. */
  tick(): boolean {
    if (!this.gc) return false;
    const busy = this.utilization() > this.idleUtilization;
    if (busy) {
      // work resumed: a compaction under way starts over once the thread is idle again
      this.roundsLeft = 0;
      return false;
    }
    if (this.roundsLeft === 0) {
      const now = this.heap();
      const grew = now.used - this.base.used >= this.growthBytes || now.total - this.base.total >= this.growthBytes;
      if (!grew) return false;
      this.roundsLeft = COMPACT_ROUNDS;
    }
    this.gc();
    this.collections++;
    this.roundsLeft--;
    if (this.roundsLeft === 0) this.base = this.heap();
    return true;
  }
}

function heapFigures(): HeapFigures {
  const h = getHeapStatistics();
  return { used: h.used_heap_size, total: h.total_heap_size };
}

/** A function answering the event loop's utilisation since its previous call. */
function eventLoopUtilization(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}
