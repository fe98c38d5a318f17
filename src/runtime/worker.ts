/**
 * The worker side of the runtime: runs one call at a time with {@link execute}, answering the
 * guest's synchronous reads by asking the main thread over the call's port and blocking in
 * `Atomics.wait` until the answer is posted (see protocol.ts). The wait is sliced so that a
 * `worker.terminate()` at the deadline lands promptly even while the guest waits on a read.
 */
import { parentPort, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { execute } from './execute.ts';
import type { SyncBackend } from './host-state.ts';
import type { BridgeRequest, BridgeResponse, CallJob, JobDone } from './protocol.ts';

const WAIT_SLICE_MS = 50;

function bridge(job: CallJob): SyncBackend {
  const flag = new Int32Array(job.flag);
  const port = job.port as unknown as MessagePort;
  const ask = <T>(req: BridgeRequest): T => {
    Atomics.store(flag, 0, 0);
    port.postMessage(req);
    while (Atomics.wait(flag, 0, 0, WAIT_SLICE_MS) === 'timed-out') {
      // keep waiting: the main thread owns the deadline and terminates this worker when it passes
    }
    let msg = receiveMessageOnPort(port);
    // the answer is posted before the flag is set; should its delivery still lag, wait it out
    for (let spins = 0; !msg && spins < 1000; spins++) {
      Atomics.wait(flag, 0, 1, 1);
      msg = receiveMessageOnPort(port);
    }
    if (!msg) throw new Error('runtime bridge: no answer from the main thread');
    const res = msg.message as BridgeResponse;
    if (!res.ok) throw new Error(res.error);
    return res.value as T;
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

parentPort!.on('message', (job: CallJob) => {
  const result = execute(job.module, job.exportTypes, job.req, bridge(job), job.limits);
  (job.port as unknown as MessagePort).close();
  parentPort!.postMessage({ type: 'result', result } satisfies JobDone);
});

parentPort!.postMessage({ type: 'ready' });
