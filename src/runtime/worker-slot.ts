/**
 * One place of the runtime's worker pool (runtime.ts): a `worker_threads` worker, the bridge it
 * blocks on while the main thread answers its reads (protocol.ts), and what the pool tracks of it
 * (busy, the modules it holds, the rows its state cache holds). Starting a worker lives here; who
 * gets a slot, and when one is replaced, is the pool's.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { BridgeServer } from './bridge-server.ts';
import { HotRows } from './hot-rows.ts';
import type { VMLimits } from './limits.ts';
import { MAX_BATCH, type AskedRequest, type JobDone, type WorkerInit } from './protocol.ts';
import { WORKER_RESOURCE_LIMITS } from './worker-retire.ts';

export interface Slot {
  worker: Worker;
  busy: boolean;
  ready: Promise<void>;
  /** this side of the worker's bridge, and the flag it waits on */
  port: MessagePort;
  flag: Int32Array;
  /** answers the bridge requests of the calls on the worker (one call's server, or a batch's by `seq`) */
  server?: Pick<BridgeServer, 'answer'>;
  /** the running call's handlers of the worker's events (listeners are added once per worker, not per call) */
  call?: { message(msg: JobDone): void; error(err: Error): void; exit(): void };
  seq: number;
  /** module keys the worker holds, least recently used first (bounded like the main cache) */
  modules: string[];
  /** what this worker's state cache holds per context: refreshed when the context's version moved (hot-rows.ts) */
  hot: HotRows;
  /** the worker thread's Linux thread id, once it is up (its CPU time, `series`) */
  tid?: number;
}

/**
 * The worker's entry: compiled code (dist/) loads `worker.js` directly; from the TypeScript sources
 * (tests, `npm run hearth`) a worker does not inherit the parent's loader, so `worker-boot.mjs`
 * registers tsx first.
 */
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './worker-boot.mjs' : './worker.js', import.meta.url);

export interface SlotEvents {
  /** the worker loaded (its `ready` message): the slot may be freed for calls */
  ready(slot: Slot): void;
  /** the worker failed with no call on it */
  idleError(slot: Slot): void;
}

/** A worker thread starting up: `booted` resolves with its Linux thread id once its module loaded (its `ready` message). */
interface Booting {
  worker: Worker;
  booted: Promise<number | undefined>;
}

function bootWorker(): Booting {
  const worker = new Worker(WORKER_URL, { resourceLimits: WORKER_RESOURCE_LIMITS });
  // listened for from the start: a worker started ahead (prestartWorker) may be ready before a slot takes it
  const booted = new Promise<number | undefined>((resolve, reject) => {
    const onReady = (msg: { type?: string; tid?: number }) => {
      if (msg?.type !== 'ready') return;
      worker.off('message', onReady);
      worker.off('error', reject);
      resolve(msg.tid);
    };
    worker.on('message', onReady);
    worker.once('error', reject);
  });
  // a prestarted worker no slot took fails unobserved; a slot's own failure is in its `ready`
  booted.catch(() => undefined);
  return { worker, booted };
}

/** a worker started ahead of the pool, for its first spawn to take */
let prestarted: Booting | undefined;

/**
 * Starts a worker now, for the pool's first spawn (issue #33): `hearth run` calls it before it loads
 * the node's code, so the worker's start (~80 ms: a thread, its Node.js, its module) runs on
 * another core beside that load rather than in the wait for the contexts' modules before the
 * node listens. The worker takes its limits when a slot takes it.
 */
export function prestartWorker(): Worker {
  prestarted ??= bootWorker();
  return prestarted.worker;
}

/** Ends the prestarted worker if no pool took it (a node with no contexts starts none until a call needs one). */
export function dropPrestartedWorker(): void {
  const left = prestarted;
  prestarted = undefined;
  void left?.worker.terminate();
}

/**
 * A new worker (the prestarted one when there is one); it is usable once its module has loaded
 * (its `ready` message): until then the slot counts as busy, so a call never pays the worker's
 * start-up against its deadline.
 */
export function spawnSlot(limits: VMLimits, on: SlotEvents): Slot {
  const { worker, booted } = prestarted ?? bootWorker();
  prestarted = undefined;
  const { port1, port2 } = new MessageChannel();
  const shared = new SharedArrayBuffer(4 * (1 + MAX_BATCH));
  worker.postMessage({ type: 'init', port: port2 as unknown as WorkerInit['port'], flag: shared, limits } satisfies WorkerInit, [port2 as unknown as MessagePort]);
  const slot: Slot = { worker, busy: true, ready: Promise.resolve(), port: port1, flag: new Int32Array(shared), seq: 0, modules: [], hot: new HotRows() };
  port1.on('message', (msg: AskedRequest) => void slot.server?.answer(msg));
  // the bridge must not keep the process alive on its own (the worker's own handle decides)
  port1.unref();
  slot.ready = booted.then((tid) => {
    slot.tid = tid;
  });
  // the running call's (run), if any
  worker.on('message', (msg: JobDone) => {
    if (msg?.type === 'result') slot.call?.message(msg);
  });
  worker.on('exit', () => slot.call?.exit());
  // A worker that fails with no call on it (a `load` job, or anything outside a call) is replaced
  // by the pool: an 'error' no one listens to would throw on this thread and end the node, and a
  // dead worker left in the pool would hold every later call on it until its deadline. A call
  // running on the worker replaces it itself (run).
  worker.on('error', (err: Error) => {
    if (slot.call) return slot.call.error(err);
    on.idleError(slot);
  });
  slot.ready.then(
    () => on.ready(slot),
    () => {
      // a worker that cannot load is replaced on its slot's next use (the error is in `ready`)
    },
  );
  return slot;
}
