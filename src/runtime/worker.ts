/**
 * The worker side of the runtime: runs one call at a time with {@link execute} (a batch's calls one
 * after the other, batch-run.ts), answering the
 * guest's synchronous reads from its state cache (state-cache.ts) or by asking the main thread over
 * its port and blocking in `Atomics.wait` until the answer is posted (see protocol.ts). The wait is
 * sliced so that a `worker.terminate()` at the deadline lands promptly even while the guest waits
 * on a read. Compiled modules are kept here by key, as the main thread tells (protocol.ts), each
 * with its instance pool (instances.ts).
 */
import { readFileSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { execute } from './execute.ts';
import type { SyncBackend } from './host-state.ts';
import { HOT_ROWS, type AskedRequest, type BatchJob, type BridgeRequest, type BridgeResponse, type CallJob, type JobDone, type LoadJob, type WorkerInit } from './protocol.ts';
import type { VMLimits } from './limits.ts';
import { InstancePool } from './instances.ts';
import { StateCache } from './state-cache.ts';
import { IdleCompactor, obtainGc } from './idle-compactor.ts';
import { INSTANCE_RELEASE_MS } from './worker-retire.ts';
import type { FuncType } from './wasm-binary.ts';

const WAIT_SLICE_MS = 50;

let port: MessagePort;
let flag: Int32Array;
let limits: VMLimits;
const modules = new Map<string, { exportTypes: Record<string, FuncType>; instances: InstancePool }>();
const states = new StateCache();

/** Numbers this worker's bridge requests, so that an answer is matched to the ask it answers. */
let asks = 0;

function bridge(job: CallJob): SyncBackend {
  const ask = <T>(req: BridgeRequest): T => {
    const id = ++asks;
    Atomics.store(flag, 0, 0);
    port.postMessage({ ...req, id, seq: job.seq } satisfies AskedRequest);
    for (;;) {
      const msg = receiveMessageOnPort(port);
      if (msg) {
        const res = msg.message as BridgeResponse;
        if (res.seq === job.seq && res.id === id) {
          if (!res.ok) throw new Error(res.error);
          return res.value as T;
        }
        // an answer to an ask that is no longer waiting: dropped. The flag it raised is lowered
        // before looking again, and the look comes first, so this ask's own answer is not missed.
        Atomics.store(flag, 0, 0);
        continue;
      }
      // Sleep until the main thread raises the flag, in slices so that a `worker.terminate()` at
      // the call's deadline lands promptly (the main thread owns the deadline). The answer is posted
      // before the flag is raised; should its delivery lag the flag, look again a millisecond later.
      if (Atomics.wait(flag, 0, 0, WAIT_SLICE_MS) === 'not-equal') Atomics.wait(flag, 0, 1, 1);
    }
  };
  return {
    hasIndexMeta: job.hasIndexMeta,
    hasBlobs: job.hasBlobs,
    hasSealing: job.hasSealing === true,
    get: (space, key) => ask<Uint8Array | undefined>({ op: 'get', space, key }),
    range: (lo, hi, limit) => ask({ op: 'range', lo, hi, limit }),
    blobRead: (fd, blobId, max) => ask({ op: 'blobRead', fd, blobId, max }),
    blobHas: (blobId) => ask({ op: 'blobHas', blobId }),
    blobFetch: (blobId, contextId) => ask({ op: 'blobFetch', blobId, contextId }),
    blobPut: (bytes) => ask({ op: 'blobPut', bytes }),
    openSealed: (envelope) => ask({ op: 'openSealed', envelope }),
  };
}

function run(job: CallJob): JobDone {
  for (const key of job.drop) modules.delete(key);
  if (job.module) modules.set(job.moduleKey, { exportTypes: job.module.exportTypes, instances: new InstancePool(job.module.module, job.module.reuse) });
  const compiled = modules.get(job.moduleKey);
  if (!compiled) {
    return { type: 'result', seq: job.seq, result: { ok: false, kind: 'HostError', message: 'host panicked: the worker lost the compiled module', logs: [] } };
  }
  const context = Buffer.from(job.req.contextId).toString('hex');
  const read = { rows: [] as string[], max: HOT_ROWS };
  const backend = states.wrap(bridge(job), context, job.stateVersion, job.refresh, job.stateVersion !== undefined ? read : undefined, job.carryFrom);
  const [created, asked] = [compiled.instances.created, asks];
  const result = execute(compiled.instances, compiled.exportTypes, job.req, backend, limits);
  return { type: 'result', seq: job.seq, result, created: compiled.instances.created - created, asks: asks - asked, ...(read.rows.length > 0 ? { read: read.rows } : {}) };
}

let releaseTimer: ReturnType<typeof setTimeout> | undefined;
/** (Re)arms the release of the kept instances after INSTANCE_RELEASE_MS free (worker-retire.ts). */
function releaseWhenIdle(): void {
  clearTimeout(releaseTimer);
  releaseTimer = setTimeout(() => {
    let released = 0;
    for (const m of modules.values()) if (m.instances.release()) released++;
    // their memories are freed when collected, and an idle worker allocates nothing that would collect
    if (released > 0) obtainGc()?.();
  }, INSTANCE_RELEASE_MS);
  releaseTimer.unref();
}

parentPort!.on('message', (msg: WorkerInit | CallJob | BatchJob | LoadJob) => {
  releaseWhenIdle();
  if (msg.type === 'init') {
    port = msg.port as unknown as MessagePort;
    flag = new Int32Array(msg.flag);
    limits = msg.limits;
    return;
  }
  if (msg.type === 'load') {
    for (const key of msg.drop) modules.delete(key);
    const instances = new InstancePool(msg.module.module, msg.module.reuse);
    modules.set(msg.moduleKey, { exportTypes: msg.module.exportTypes, instances });
    try {
      instances.warm();
    } catch {
      // the instance could not be made (its start function traps, a segment does not fit): the
      // module is kept, and each call instantiates it and reports the trap as its own failure
    }
    return;
  }
  if (msg.type === 'batch') {
    // each answered as it is done: a call behind a runaway must not lose the answers before it
    for (const [k, job] of msg.jobs.entries()) {
      if (Atomics.load(flag, 1 + k) === 1) {
        parentPort!.postMessage({ type: 'result', seq: job.seq, skipped: true, result: { ok: false, kind: 'Aborted', message: 'execution aborted', logs: [] } } satisfies JobDone);
        continue;
      }
      parentPort!.postMessage(run(job));
    }
    return;
  }
  parentPort!.postMessage(run(msg));
});

/** this thread's Linux thread id (for its CPU time in /proc, runtime.ts `series`); undefined elsewhere */
function threadId(): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/stat', 'utf8').split(' ', 1)[0]) || undefined;
  } catch {
    return undefined;
  }
}

// the kept worker's heap after a load is collected once it falls idle (idle-compactor.ts, issue #22);
// its heap is small (young generation capped, worker-retire.ts), so a smaller growth is worth it
new IdleCompactor({ growthBytes: 4 * 1024 * 1024 }).start();

parentPort!.postMessage({ type: 'ready', tid: threadId() });
