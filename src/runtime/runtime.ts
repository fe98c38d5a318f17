/**
 * The WebAssembly host (issue #4; runtime.md §2–§3): implements the {@link Runtime} contract.
 *
 * - Compiled modules are cached per application id (bounded LRU) on the main thread; each worker
 *   gets a module once and keeps it (the main thread tracks which it holds, bounded the same way:
 *   module-cache.ts). A pool slot and its worker's start are worker-slot.ts; the counters and
 *   their metric series runtime-metrics.ts.
 * - Calls run in a pool of `worker_threads` workers (one per core and one more by default, at least three),
 *   started when calls first need them (an idle node holds no worker: issue #14). V8
 *   has no gas, so a call that passes its wall-clock deadline is stopped by terminating its worker,
 *   which the pool then replaces; the call answers `Deadline`. A call whose `signal` aborts (its
 *   client went away) answers `Aborted` at once, but its worker is not terminated (issue #22: every
 *   load run used to end with workers replaced): the call is abandoned and the worker finishes it,
 *   or meets the deadline as any runaway.
 * - Isolation between contexts (issue #17 finding 8): one context holds at most all workers but
 *   one, so a runaway in one context cannot delay another context's calls by its deadline; calls
 *   waiting for a worker are bounded (in all, and per context a quarter of that), and a call past
 *   the bound is refused at once with 503 and Retry-After rather than queued without end. A freed
 *   worker goes to the waiting call whose context holds the fewest workers, then has used the
 *   least worker time recently, then has waited longest (issue #23: fair across contexts, so N
 *   runaway contexts cannot starve a healthy one). A call that commits nothing it changes takes
 *   with it up to `batchMax - 1` more of its context waiting, in one message (batch-run.ts).
 * - The guest's storage and blob reads are synchronous, the node's views are not: the worker
 *   blocks on a shared flag while this side answers from `StateView` / `IndexView` / blobs
 *   (protocol.ts), over one channel per worker. A call that names its context's state version
 *   has its reads kept in the worker (state-cache.ts), so calls under the same version read from
 *   memory; when the version moved (a write committed), the rows that worker last read or wrote
 *   for the context are read here at once and sent with the job, so its cache carries over
 *   (issue #22). A call goes to a free worker that last ran its context when there is one
 *   (affinity, within the context's share). The call's writes stay in the worker and come back in
 *   the result.
 */
import type { RuntimeBlobs } from './blob-access.ts';
import type { RuntimeSealing } from './sealing.ts';
import type { CompiledGuest } from './compile.ts';
import type { CallRequest, CallResult, Runtime } from './call-types.ts';
import {
  DEFAULT_DEADLINE_MS,
  DEFAULT_LIMITS,
  DEFAULT_MODULE_CACHE_SIZE,
  DEFAULT_POOL_SIZE,
  DEFAULT_QUEUE_LIMIT,
  type VMLimits,
} from './limits.ts';
import { availableParallelism } from 'node:os';
import { onAbort as watchAbort } from '../abort-watch.ts';
import { toHex } from '../crypto/ids.ts';
import { unavailable } from '../errors.ts';
import { MAX_BATCH, type CallJob, type LoadJob } from './protocol.ts';
import { failure, runOn, type Outcome, type Queued, type RunHost } from './batch-run.ts';
import type { Space } from './host-state.ts';
import { Trap } from './trap.ts';
import { Deadlines } from './deadlines.ts';
import { FairShare, type FairWaiter } from './fair-share.ts';
import { DEFAULT_IDLE_RETIRE_MS, DEFAULT_KEEP_WORKERS, IdleRetirement } from './worker-retire.ts';
import { ModuleCache } from './module-cache.ts';
import { newRuntimeStats, runtimeSeries, type MetricSeries, type RuntimeStats } from './runtime-metrics.ts';
import { spawnSlot, type Slot } from './worker-slot.ts';

export interface WasmRuntimeOptions {
  /** workers running calls in parallel (default: one per core and one more, at least 3) */
  poolSize?: number;
  /** calls waiting for a worker at most, all contexts together (default 256) */
  queueLimit?: number;
  /** wall-clock budget of a call without its own `deadlineMs` (default 10 s) */
  deadlineMs?: number;
  /** compiled modules kept (default 32) */
  moduleCacheSize?: number;
  limits?: Partial<VMLimits>;
  /** blob access for `blob_*`; without it those functions trap as on a node without blobs */
  blobs?: RuntimeBlobs;
  /** opens envelopes for `open_sealed`; without it that function traps as in a run given no key */
  sealing?: RuntimeSealing;
  /** a worker free this long is terminated, down to `keepWorkers` (default 5 s, 0: never; worker-retire.ts) */
  idleRetireMs?: number;
  /** workers kept when idle ones retire (default 1) */
  keepWorkers?: number;
  /** read-only calls of one context a worker takes in one message at most (default 8; 1: one at a time) */
  batchMax?: number;
}

interface Waiter extends FairWaiter {
  call: Queued;
  /** its outcome once it runs (it got a worker); null: the runtime stopped */
  grant: (got: Promise<Outcome> | null) => void;
}

/**
 * Default pool size: one worker per core and one more, at least three. A call's worker spends part
 * of its time waiting on the main thread (reads, the job and result messages), and a context holds
 * at most all workers but one (a runaway then never holds them all): with three, one context's
 * calls run two at a time (issue #14: +80% JSON-RPC reads of one context on two cores). Workers
 * start on demand, so an idle node holds none.
 */
export function defaultPoolSize(): number {
  return Math.max(DEFAULT_POOL_SIZE, availableParallelism() + 1);
}

/** How long a refused caller is told to wait: about one call's deadline. */
const BUSY_RETRY_AFTER_SECS = 5;
/** A call waits for a worker at most its deadline and this much more, then fails with `Deadline`. */
const WAIT_GRACE_MS = 1_000;

/** A call that commits nothing it changes (a view call, or one run under the context's shared lock) may go in a batch. */
const batchable = (req: CallRequest): boolean => req.readOnly || req.shared === true;
/** Read-only calls of one context a freed worker takes at most (issue #33: one job message for them all). */
const DEFAULT_BATCH = 8;
export class WasmRuntime implements Runtime {
  readonly limits: VMLimits;
  private readonly poolSize: number;
  private readonly deadlineMs: number;
  private readonly blobs?: RuntimeBlobs;
  private readonly sealing?: RuntimeSealing;
  private readonly modules: ModuleCache;
  private slots: Slot[] = [];
  private waiters: Waiter[] = [];
  /** workers each context holds now */
  private readonly holding = new Map<string, number>();
  /** which waiting call a freed worker goes to (fair-share.ts) */
  private readonly fair: FairShare;
  private readonly queueLimit: number;
  private readonly batchMax: number;
  private running = false;
  /** every call's deadline, of its wait for a worker and of its run, under one timer */
  private readonly deadlines = new Deadlines();

  constructor(opts: WasmRuntimeOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.poolSize = Math.max(1, opts.poolSize || defaultPoolSize());
    this.queueLimit = Math.max(1, opts.queueLimit ?? DEFAULT_QUEUE_LIMIT);
    this.batchMax = Math.min(MAX_BATCH, Math.max(1, opts.batchMax ?? DEFAULT_BATCH));
    this.deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    // a context's recent worker time halves every deadline
    this.fair = new FairShare(this.deadlineMs);
    this.modules = new ModuleCache(this.limits, Math.max(1, opts.moduleCacheSize ?? DEFAULT_MODULE_CACHE_SIZE));
    this.blobs = opts.blobs;
    this.sealing = opts.sealing;
    const pool = this;
    this.host = {
      deadlineMs: this.deadlineMs,
      deadlines: this.deadlines,
      stats: this.stats,
      fair: this.fair,
      modules: this.modules,
      blobs: this.blobs,
      sealing: this.sealing,
      // the one part that changes: a stop while calls run
      get running() {
        return pool.running;
      },
      done: (slot, context, replace) => {
        this.unhold(context);
        this.release(slot, replace);
      },
    };
    this.retirement = new IdleRetirement<Slot>({
      idleMs: opts.idleRetireMs ?? DEFAULT_IDLE_RETIRE_MS,
      keep: opts.keepWorkers ?? DEFAULT_KEEP_WORKERS,
      slots: () => this.slots,
      isFree: (s) => !s.busy,
      retire: (s) => {
        this.slots.splice(this.slots.indexOf(s), 1);
        s.port.close();
        void s.worker.terminate();
      },
    });
  }

  /** retires idle workers (worker-retire.ts) */
  private readonly retirement: IdleRetirement<Slot>;

  /** Starts taking calls; workers start with the first calls that need them (`warm`: all now). */
  async start(opts: { warm?: boolean } = {}): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.retirement.start();
    if (!opts.warm) return;
    this.slots = Array.from({ length: this.poolSize }, () => this.spawn());
    await Promise.all(this.slots.map((s) => s.ready));
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.retirement.stop();
    for (const w of this.waiters.splice(0)) w.grant(null);
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  /** workers started (loading or loaded) */
  get workers(): number {
    return this.slots.length;
  }

  /** number of compiled modules held (for tests and metrics) */
  get cachedModules(): number {
    return this.modules.held;
  }

  async call(req: CallRequest): Promise<CallResult> {
    if (!this.running) throw new Error('WasmRuntime.call before start() or after stop()');
    if (req.signal?.aborted) return failure('Aborted', 'execution aborted');
    let compiled: CompiledGuest;
    try {
      const got = this.modules.compiled(req);
      compiled = got instanceof Promise ? await got : got;
    } catch (e) {
      if (e instanceof Trap) return failure(e.kind, e.message);
      throw e;
    }
    const call: Queued = { req, compiled, context: toHex(req.contextId) };
    const waitMs = (req.deadlineMs ?? this.deadlineMs) + WAIT_GRACE_MS;
    for (let again = false; ; again = true) {
      if (!this.running) return failure('Aborted', 'runtime stopped');
      // a call handed back may have lost its caller meanwhile (its wait would not hear of it)
      if (again && req.signal?.aborted) return failure('Aborted', 'execution aborted');
      const got = await this.acquire(call, waitMs, again);
      if (got === 'timeout') {
        // a busy node answers 503 with Retry-After (the back-pressure contract), never a failed call
        // carried by a 200 (issue #37 item 3): the call did not run, so the client may retry it
        const e = unavailable(`No worker was free within ${waitMs} ms (every worker is busy: ${this.poolSize} workers, ${this.waiters.length} calls waiting); retry later`);
        e.extra.retryAfterSecs = BUSY_RETRY_AFTER_SECS;
        throw e;
      }
      if (got === null) return failure('Aborted', req.signal?.aborted ? 'execution aborted' : 'runtime stopped');
      // 'again': a call before it in its batch failed its worker; it did not run and waits anew
      if (got !== 'again') return got;
    }
  }

  /**
   * Runs `calls` (one context's) on `slot`, which the context holds until the worker is through
   * with them: the rows the worker's cache holds are read again first when the context's version
   * moved, and a call whose caller went away meanwhile is dropped.
   */
  private runCalls(slot: Slot, calls: Queued[]): Array<Promise<Outcome>> {
    const { context } = calls[0]!;
    const stale = slot.hot.stale(context, calls[0]!.req.stateVersion, calls[0]!.req.changedSince);
    if (!stale) return this.runLive(slot, calls);
    const ran = this.refreshFor(stale.rows, calls[0]!.req).then((refresh) => this.runLive(slot, calls, refresh, stale.carry));
    return calls.map((_, k) => ran.then((outcomes) => outcomes[k]!));
  }

  private runLive(slot: Slot, calls: Queued[], refresh?: CallJob['refresh'], carryFrom?: number): Array<Promise<Outcome>> {
    const live = calls.filter((c) => !c.req.signal?.aborted);
    const first = live[0] === calls[0];
    const outcomes = live.length > 0 ? runOn(this.host, slot, live, first ? refresh : undefined, first ? carryFrom : undefined) : (this.host.done(slot, calls[0]!.context, false), []);
    return calls.map((c) => (live.includes(c) ? outcomes[live.indexOf(c)]! : Promise.resolve(failure('Aborted', 'execution aborted'))));
  }

  /** What running calls needs of this pool (batch-run.ts): made in the constructor, once every part it names exists. */
  private readonly host: RunHost;

  /**
   * The current values of the rows `slot`'s worker holds for `context`, when the context's version
   * moved since that worker's last call there (a write committed, most often that very call's):
   * read here, all at once, so the worker keeps its cache instead of asking again row by row.
   */
  private async refreshFor(rows: Array<[Space, Uint8Array]>, req: CallRequest): Promise<CallJob['refresh']> {
    const views = { state: req.state, private: req.privateState, index: req.index, indexMeta: undefined } as const;
    try {
      return await Promise.all(rows.map(async ([space, key]) => [space, key, (await views[space]?.get(key)) ?? null] as [Space, Uint8Array, Uint8Array | null]));
    } catch {
      return undefined; // the worker asks for what it needs, as without a refresh
    }
  }

  private unhold(context: string): void {
    const left = (this.holding.get(context) ?? 1) - 1;
    if (left > 0) this.holding.set(context, left);
    else this.holding.delete(context);
  }

  /** Running totals since start, for /metrics and the benches (`series()`). */
  readonly stats = newRuntimeStats();

  /** The runtime's counters as metric series (`hearth_runtime_*`). */
  series(): MetricSeries[] {
    return runtimeSeries(this.stats, {
      retired: () => this.retirement.retired,
      workerTids: () => this.slots.map((s) => s.tid),
      throttledContexts: () => this.fair.throttledContexts(),
      coolDowns: () => this.fair.throttled.coolDowns,
    });
  }

  /**
   * Compiles `module` now (in the background for the caller that does not await) and readies the
   * workers with it: a worker is started if none is, and each gets the module and makes its
   * instance before a call needs it (issue #22: the first call after a restart cost 115 ms, a warm
   * one 8). A compile failure is left for the first call to report.
   */
  async prepare(module: Pick<CallRequest, 'applicationId' | 'wasm'>): Promise<void> {
    if (!this.running) return;
    // the worker starts while the module compiles (issue #33: one after the other, the two were
    // most of the wait before a node listens)
    if (this.slots.length === 0) this.slots.push(this.spawn());
    let compiled: CompiledGuest;
    try {
      compiled = await this.modules.compiled(module);
    } catch {
      return;
    }
    if (!this.running) return;
    await Promise.all(
      this.slots.map((slot) =>
        slot.ready.then(
          () => {
            if (!this.slots.includes(slot) || slot.modules.includes(module.applicationId)) return;
            const { moduleKey, module: m, drop } = this.modules.forWorker(slot.modules, module.applicationId, compiled);
            slot.worker.postMessage({ type: 'load', moduleKey, module: m!, drop } satisfies LoadJob);
          },
          () => undefined,
        ),
      ),
    );
  }

  /** Workers one context may hold at once: all but one, so other contexts always find one. */
  private get contextShare(): number {
    return Math.max(1, this.poolSize - 1);
  }

  private mayRun(context: string): boolean {
    // a throttled context's share is one worker, none while it cools down, and throttled contexts
    // together leave one worker to the others (fair-share.ts)
    return this.fair.mayTake(context, this.holding.get(context) ?? 0, this.contextShare, this.holding);
  }

  /** A new worker (worker-slot.ts); it joins the pool as a free slot once it has loaded. */
  private spawn(): Slot {
    return spawnSlot(this.limits, {
      ready: (slot) => {
        if (this.slots.includes(slot)) this.release(slot, false);
      },
      // replaced here: a dead worker left in the pool would hold every later call on it
      idleError: (slot) => {
        if (slot.busy || !this.slots.includes(slot)) return;
        this.stats.replaced.error++;
        this.release(slot, true);
      },
    });
  }

  /**
   * Runs `call` on a free worker, now or when one frees up (then perhaps with other read-only calls
   * of its context: dispatch); null when aborted or stopped while waiting, 'timeout' when no worker
   * freed within `waitMs`. Refuses (503) when the context cools down or the wait list is full, or
   * this context's part of it is; not a call handed back from a batch (`again`): it was in line
   * already, and goes back to the front.
   */
  private acquire(call: Queued, waitMs: number, again: boolean): Promise<Outcome | null | 'timeout'> {
    const { context } = call;
    const cooling = again ? 0 : this.fair.coolingMs(context);
    if (cooling > 0) {
      const e = unavailable(`This context's calls kept running past their deadline: it cools down for ${Math.ceil(cooling / 1000)} s more; retry later`);
      e.extra.retryAfterSecs = Math.ceil(cooling / 1000);
      return Promise.reject(e);
    }
    // affinity: a free worker that ran this context last has its rows cached; any free one otherwise
    const free = this.mayRun(context) ? (this.slots.find((s) => !s.busy && s.hot.has(context)) ?? this.slots.find((s) => !s.busy)) : undefined;
    if (free) {
      free.busy = true;
      this.hold(context);
      return this.runCalls(free, [call])[0]!;
    }
    let mine = 0;
    for (const w of this.waiters) if (w.context === context) mine++;
    if (!again && (this.waiters.length >= this.queueLimit || mine >= Math.max(1, Math.ceil(this.queueLimit / 4)))) {
      const e = unavailable(`The node is running as many application calls as it can (${this.poolSize} workers, ${this.waiters.length} calls waiting); retry later`);
      e.extra.retryAfterSecs = BUSY_RETRY_AFTER_SECS;
      return Promise.reject(e);
    }
    // one more worker while the pool is not full: it takes the longest waiting call once loaded
    if (this.mayRun(context) && this.slots.length < this.poolSize) this.slots.push(this.spawn());
    const signal = call.req.signal;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        context,
        // handed back: first in its context's line
        since: again ? 0 : performance.now(),
        call,
        grant: (got) => {
          cancel();
          unwatch?.();
          resolve(got);
        },
      };
      const leave = (why: null | 'timeout') => {
        cancel();
        unwatch?.();
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(why);
      };
      const cancel = this.deadlines.add(waitMs, () => leave('timeout'));
      const unwatch = signal && watchAbort(signal, () => leave(null));
      if (again) this.waiters.unshift(waiter);
      else this.waiters.push(waiter);
    });
  }

  private release(slot: Slot, replace: boolean): void {
    if (replace) {
      slot.port.close();
      void slot.worker.terminate();
      const i = this.slots.indexOf(slot);
      // the replacement joins the pool when it has loaded (see spawn)
      if (i >= 0 && this.running) this.slots[i] = this.spawn();
      // the context's share freed up: a waiting call may take another free worker
      this.dispatch();
      return;
    }
    slot.busy = false;
    this.retirement.touched(slot);
    this.dispatch();
  }

  /**
   * Hands free workers to waiting calls, fairly across contexts (fair-share.ts; issue #23). A
   * read-only call (`batchable`: a view call, or one under the context's shared lock) takes with
   * it up to `batchMax - 1` more such calls of its context waiting
   * (in their order) under the same module and state version: one message to the worker for them
   * all (batch-run.ts). The batch holds one worker; fair-share charges each call its own run.
   */
  private dispatch(): void {
    for (;;) {
      const slot = this.slots.find((s) => !s.busy);
      const lead = slot ? this.fair.pick(this.waiters, (c) => this.holding.get(c) ?? 0, (c) => this.mayRun(c)) : undefined;
      if (!slot || !lead) return;
      const batch = [lead];
      const { req } = lead.call;
      if (batchable(req) && this.batchMax > 1) {
        for (const w of this.waiters) {
          if (batch.length >= this.batchMax) break;
          const other = w.call.req;
          if (w !== lead && w.context === lead.context && batchable(other) && other.applicationId === req.applicationId && other.stateVersion === req.stateVersion) batch.push(w);
        }
      }
      this.waiters = batch.length === 1 ? this.waiters.filter((w) => w !== lead) : this.waiters.filter((w) => !batch.includes(w));
      slot.busy = true;
      // counted before the calls resume, so the next dispatch already sees the context's share
      this.hold(lead.context);
      const outcomes = this.runCalls(slot, batch.map((w) => w.call));
      for (const [k, w] of batch.entries()) w.grant(outcomes[k]!);
    }
  }

  private hold(context: string): void {
    this.holding.set(context, (this.holding.get(context) ?? 0) + 1);
  }
}
