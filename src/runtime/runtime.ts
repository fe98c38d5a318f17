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
 *   runaway contexts cannot starve a healthy one).
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
import { BridgeServer } from './bridge-server.ts';
import type { RuntimeSealing } from './sealing.ts';
import type { CompiledGuest } from './compile.ts';
import type { CallFailure, CallRequest, CallResult, FailureKind, Runtime } from './call-types.ts';
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
import type { CallJob, JobDone, LoadJob } from './protocol.ts';
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
}

interface Waiter extends FairWaiter {
  grant: (slot: Slot | null) => void;
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

const failure = (kind: FailureKind, message: string, logs: string[] = []): CallFailure => ({ ok: false, kind, message, logs });
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
  private running = false;
  /** every call's deadline, of its wait for a worker and of its run, under one timer */
  private readonly deadlines = new Deadlines();

  constructor(opts: WasmRuntimeOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.poolSize = Math.max(1, opts.poolSize || defaultPoolSize());
    this.queueLimit = Math.max(1, opts.queueLimit ?? DEFAULT_QUEUE_LIMIT);
    this.deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    // a context's recent worker time halves every deadline
    this.fair = new FairShare(this.deadlineMs);
    this.modules = new ModuleCache(this.limits, Math.max(1, opts.moduleCacheSize ?? DEFAULT_MODULE_CACHE_SIZE));
    this.blobs = opts.blobs;
    this.sealing = opts.sealing;
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
    const context = toHex(req.contextId);
    const waitMs = (req.deadlineMs ?? this.deadlineMs) + WAIT_GRACE_MS;
    const got = this.acquire(context, req.signal, waitMs);
    const slot = got instanceof Promise ? await got : got;
    if (slot === 'timeout') {
      // a busy node answers 503 with Retry-After (the back-pressure contract), never a failed call
      // carried by a 200 (issue #37 item 3): the call did not run, so the client may retry it
      const e = unavailable(`No worker was free within ${waitMs} ms (every worker is busy: ${this.poolSize} workers, ${this.waiters.length} calls waiting); retry later`);
      e.extra.retryAfterSecs = BUSY_RETRY_AFTER_SECS;
      throw e;
    }
    if (!slot) return failure('Aborted', req.signal?.aborted ? 'execution aborted' : 'runtime stopped');
    try {
      const stale = slot.hot.stale(context, req.stateVersion, req.changedSince);
      const refresh = stale ? await this.refreshFor(stale.rows, req) : undefined;
      if (req.signal?.aborted) {
        this.unhold(context);
        this.release(slot, false);
        return failure('Aborted', 'execution aborted');
      }
      return await this.run(slot, compiled, req, () => this.unhold(context), context, refresh, stale?.carry);
    } catch (e) {
      this.unhold(context);
      this.release(slot, false);
      throw e;
    }
  }

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
   * A free worker for a call of `context`, now or when one frees up; null when aborted or stopped.
   * Refuses (503) when the wait list is full, or this context's part of it is.
   */
  private acquire(context: string, signal: AbortSignal | undefined, waitMs: number): Slot | Promise<Slot | null | 'timeout'> {
    const cooling = this.fair.coolingMs(context);
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
      return free;
    }
    let mine = 0;
    for (const w of this.waiters) if (w.context === context) mine++;
    if (this.waiters.length >= this.queueLimit || mine >= Math.max(1, Math.ceil(this.queueLimit / 4))) {
      const e = unavailable(`The node is running as many application calls as it can (${this.poolSize} workers, ${this.waiters.length} calls waiting); retry later`);
      e.extra.retryAfterSecs = BUSY_RETRY_AFTER_SECS;
      return Promise.reject(e);
    }
    // one more worker while the pool is not full: it takes the longest waiting call once loaded
    if (this.mayRun(context) && this.slots.length < this.poolSize) this.slots.push(this.spawn());
    return new Promise((resolve) => {
      const waiter: Waiter = {
        context,
        since: performance.now(),
        grant: (slot) => {
          cancel();
          unwatch?.();
          resolve(slot);
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
      this.waiters.push(waiter);
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

  /** Hands free workers to waiting calls, fairly across contexts (fair-share.ts; issue #23). */
  private dispatch(): void {
    for (;;) {
      const slot = this.slots.find((s) => !s.busy);
      const waiter = slot ? this.fair.pick(this.waiters, (c) => this.holding.get(c) ?? 0, (c) => this.mayRun(c)) : undefined;
      if (!slot || !waiter) return;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      slot.busy = true;
      // counted before the call resumes, so the next dispatch already sees the context's share
      this.hold(waiter.context);
      waiter.grant(slot);
    }
  }

  private hold(context: string): void {
    this.holding.set(context, (this.holding.get(context) ?? 0) + 1);
  }

  /**
   * Runs the call on `slot`. The answer comes when the worker answers, the deadline passes, or the
   * caller aborts; on an abort (a client that disconnected) the worker is not terminated: the call
   * is abandoned, and the worker is freed (`freed`, then back to the pool) when it finishes the
   * call or, at the deadline, terminated and replaced as any runaway.
   */
  private run(slot: Slot, compiled: CompiledGuest, req: CallRequest, freed: () => void, context: string, refresh?: CallJob['refresh'], carryFrom?: number): Promise<CallResult> {
    const deadlineMs = req.deadlineMs ?? this.deadlineMs;
    const started = performance.now();
    const seq = ++slot.seq;
    const served = new BridgeServer(req, this.blobs, slot.flag, slot.port, seq, this.sealing);
    slot.server = served;
    const job: CallJob = {
      type: 'call',
      seq,
      ...this.modules.forWorker(slot.modules, req.applicationId, compiled),
      ...(req.stateVersion !== undefined ? { stateVersion: req.stateVersion } : {}),
      // no refresh (its read failed), no carry: the worker then keeps nothing of the old version
      ...(refresh ? { refresh, ...(carryFrom !== undefined ? { carryFrom } : {}) } : {}),
      req: {
        method: req.method,
        input: req.input,
        contextId: req.contextId,
        executorId: req.executorId,
        deviceId: req.deviceId,
        readOnly: req.readOnly,
        ...(req.xcallOrigin ? { xcallOrigin: req.xcallOrigin } : {}),
      },
      hasIndexMeta: req.indexMeta !== undefined,
      hasBlobs: this.blobs !== undefined,
      hasSealing: this.sealing !== undefined,
    };

    return new Promise<CallResult>((resolve) => {
      let answered = false;
      let done = false;
      const answer = (result: CallResult) => {
        if (answered) return;
        answered = true;
        unwatch?.();
        resolve(result);
      };
      const free = (replace: false | keyof RuntimeStats['replaced']) => {
        if (done) return;
        done = true;
        cancel();
        unwatch?.();
        if (slot.call === handlers) slot.call = undefined;
        served.close();
        if (slot.server === served) slot.server = undefined;
        this.stats.calls++;
        if (replace) this.stats.replaced[replace]++;
        this.fair.charge(context, performance.now() - started, replace === 'deadline' ? 'stopped' : replace === false ? 'done' : undefined);
        freed();
        this.release(slot, replace !== false);
      };
      const onMessage = (msg: JobDone) => {
        if (msg.seq !== seq) return;
        this.stats.instancesCreated += msg.created ?? 0;
        this.stats.roundTrips += msg.asks ?? 0;
        slot.hot.note(context, req.stateVersion, msg.read, msg.result);
        answer(msg.result);
        free(false);
      };
      const onError = (err: Error) => {
        answer(failure('HostError', `host panicked: ${err.message}`));
        free('error');
      };
      const onExit = () => {
        answer(this.running ? failure('HostError', 'host panicked: the execution worker exited') : failure('Aborted', 'runtime stopped'));
        free('exit');
      };
      // the caller went away: it gets its answer now, the worker finishes the call (or meets the deadline)
      const onAbort = () => {
        this.stats.abandoned++;
        answer(failure('Aborted', 'execution aborted'));
      };
      const cancel = this.deadlines.add(deadlineMs, () => {
        answer(failure('Deadline', `execution exceeded its deadline of ${deadlineMs} ms`));
        free('deadline');
      });
      const unwatch = req.signal && watchAbort(req.signal, onAbort);
      const handlers = { message: onMessage, error: onError, exit: onExit };
      slot.call = handlers;
      try {
        slot.worker.postMessage(job);
      } catch (e) {
        // nothing reached the worker: the call fails, the worker stays as it was
        answer(failure('HostError', `host panicked: ${e instanceof Error ? e.message : String(e)}`));
        free(false);
      }
    });
  }
}

