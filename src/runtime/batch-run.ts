/**
 * Running calls on one worker (runtime.ts hands a slot and the calls it takes): one call, or up to
 * a few read-only calls of one context in one message (issue #33: at 32 connections each `get` paid
 * its own job message to a worker and that worker's wake-up). The worker runs a batch's calls one
 * after the other, each on a freshly restored instance as a single call, and answers each as it is
 * done (worker.ts); each call's bridge reads carry its `seq`, so they reach that call's views.
 *
 * A call's deadline runs from when it starts in the worker (the previous call's answer arrived),
 * not from when the batch was posted. A call that passes it is stopped as a single call is: its
 * worker terminated and replaced; the calls behind it in the batch did not run and are handed back
 * (`'again'`), to wait for a worker anew. A call whose caller went away before it starts is skipped
 * by the worker (a shared flag per place in the batch) and answers `Aborted` at once; one that is
 * running is abandoned as before (the worker finishes it, or meets the deadline).
 */
import type { RuntimeBlobs } from './blob-access.ts';
import { BridgeServer } from './bridge-server.ts';
import type { CallFailure, CallRequest, CallResult, FailureKind } from './call-types.ts';
import type { CompiledGuest } from './compile.ts';
import type { Deadlines } from './deadlines.ts';
import type { FairShare } from './fair-share.ts';
import type { ModuleCache } from './module-cache.ts';
import type { BatchJob, CallJob, JobDone } from './protocol.ts';
import type { RuntimeStats } from './runtime-metrics.ts';
import type { RuntimeSealing } from './sealing.ts';
import type { Slot } from './worker-slot.ts';
import { onAbort as watchAbort } from '../abort-watch.ts';

/** One call as the pool holds it while it waits for a worker. */
export interface Queued {
  req: CallRequest;
  compiled: CompiledGuest;
  /** the context id in hex */
  context: string;
}

/** A call's end: its result, or `'again'` when it did not run (a call before it in its batch failed its worker). */
export type Outcome = CallResult | 'again';

/** What running calls needs of the pool. */
export interface RunHost {
  readonly deadlineMs: number;
  readonly deadlines: Deadlines;
  readonly stats: RuntimeStats;
  readonly fair: FairShare;
  readonly modules: ModuleCache;
  readonly blobs?: RuntimeBlobs;
  readonly sealing?: RuntimeSealing;
  readonly running: boolean;
  /** the worker is done with `context`'s calls: back to the pool, or terminated and replaced */
  done(slot: Slot, context: string, replace: boolean): void;
}

export const failure = (kind: FailureKind, message: string, logs: string[] = []): CallFailure => ({ ok: false, kind, message, logs });

function jobOf(host: RunHost, slot: Slot, call: Queued, seq: number, refresh?: CallJob['refresh'], carryFrom?: number): CallJob {
  const { req } = call;
  return {
    type: 'call',
    seq,
    ...host.modules.forWorker(slot.modules, req.applicationId, call.compiled),
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
    hasBlobs: host.blobs !== undefined,
    hasSealing: host.sealing !== undefined,
  };
}

/**
 * Runs `calls` (one context's; more than one only when all are read-only) on `slot`, the first
 * with `refresh` (the rows its worker's cache reads again) and `carryFrom` (the version whose
 * other rows the worker keeps, state-cache.ts). Answers each call's outcome; the slot
 * goes back through `host.done` once the worker is through with them all.
 */
export function runOn(host: RunHost, slot: Slot, calls: Queued[], refresh?: CallJob['refresh'], carryFrom?: number): Promise<Outcome>[] {
  const n = calls.length;
  const first = slot.seq + 1;
  slot.seq += n;
  const jobs = calls.map((c, k) => (k === 0 ? jobOf(host, slot, c, first, refresh, carryFrom) : jobOf(host, slot, c, first + k)));
  const servers = calls.map((c, k) => new BridgeServer(c.req, host.blobs, slot.flag, slot.port, first + k, host.sealing));
  const settle: Array<(o: Outcome) => void> = [];
  const outcomes = calls.map(() => new Promise<Outcome>((resolve) => settle.push(resolve)));
  const answered = new Array<boolean>(n).fill(false);
  const answer = (k: number, o: Outcome) => {
    if (answered[k]) return;
    answered[k] = true;
    settle[k]!(o);
  };
  /** the call running in the worker now */
  let current = 0;
  let started = performance.now();
  let finished = false;
  let cancel = () => {};

  const finish = (replace: false | keyof RuntimeStats['replaced']) => {
    if (finished) return;
    finished = true;
    cancel();
    for (const u of unwatch) u?.();
    if (slot.call === handlers) slot.call = undefined;
    if (slot.server === router) slot.server = undefined;
    for (const s of servers) s.close();
    if (replace) host.stats.replaced[replace]++;
    // the calls behind the one that failed its worker did not run: they wait for a worker anew
    for (let k = current + 1; k < n; k++) answer(k, 'again');
    host.done(slot, calls[0]!.context, replace !== false);
  };
  /** the call now running ended (`end` for the throttle, none when the worker failed) */
  const ended = (end?: 'stopped' | 'done') => {
    host.stats.calls++;
    host.fair.charge(calls[current]!.context, performance.now() - started, end);
    servers[current]!.close();
  };
  const arm = () => {
    const deadlineMs = calls[current]!.req.deadlineMs ?? host.deadlineMs;
    cancel = host.deadlines.add(deadlineMs, () => {
      answer(current, failure('Deadline', `execution exceeded its deadline of ${deadlineMs} ms`));
      ended('stopped');
      finish('deadline');
    });
  };
  const onMessage = (msg: JobDone) => {
    const k = msg.seq - first;
    if (finished || k !== current) return;
    cancel();
    const call = calls[k]!;
    if (!msg.skipped) {
      host.stats.instancesCreated += msg.created ?? 0;
      host.stats.roundTrips += msg.asks ?? 0;
      slot.hot.note(call.context, call.req.stateVersion, msg.read, msg.result);
      ended('done');
    }
    answer(k, msg.result);
    if (++current === n) return finish(false);
    started = performance.now();
    arm();
  };
  const onError = (err: Error) => {
    answer(current, failure('HostError', `host panicked: ${err.message}`));
    ended();
    finish('error');
  };
  const onExit = () => {
    answer(current, host.running ? failure('HostError', 'host panicked: the execution worker exited') : failure('Aborted', 'runtime stopped'));
    ended();
    finish('exit');
  };
  // the caller went away: it gets its answer now. A call not yet started is skipped by the worker;
  // the running one is abandoned (the worker finishes it, or meets the deadline)
  const unwatch = calls.map((c, k) =>
    c.req.signal
      ? watchAbort(c.req.signal, () => {
          if (finished || answered[k]) return;
          if (k > current) Atomics.store(slot.flag, 1 + k, 1);
          else host.stats.abandoned++;
          answer(k, failure('Aborted', 'execution aborted'));
        })
      : undefined,
  );
  const handlers = { message: onMessage, error: onError, exit: onExit };
  const router = n === 1 ? servers[0]! : { answer: (msg: { seq: number }) => servers[msg.seq - first]?.answer(msg as never) };
  slot.call = handlers;
  slot.server = router;
  for (let k = 1; k <= n; k++) Atomics.store(slot.flag, k, 0);
  if (n > 1) {
    host.stats.batched.calls += n;
    host.stats.batched.batches++;
  }
  arm();
  try {
    slot.worker.postMessage(n === 1 ? jobs[0] : ({ type: 'batch', jobs } satisfies BatchJob));
  } catch (e) {
    // nothing reached the worker: the calls fail, the worker stays as it was
    for (let k = 0; k < n; k++) answer(k, failure('HostError', `host panicked: ${e instanceof Error ? e.message : String(e)}`));
    current = n;
    finish(false);
  }
  return outcomes;
}
