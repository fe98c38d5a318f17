/**
 * The messages between the runtime (main thread) and its workers. Each worker gets, once, a
 * `MessagePort` and a shared flag ({@link WorkerInit}); the worker's synchronous reads go over that
 * port: it posts a {@link BridgeRequest}, blocks in `Atomics.wait` on the flag, and takes the answer
 * with `receiveMessageOnPort` once the main thread has posted it and notified. A call's job names
 * its compiled module by key and carries the `WebAssembly.Module` only the first time that worker
 * runs it (the worker keeps what the main thread says it keeps: `drop` names what it lets go).
 */
import type { CallResult } from './call-types.ts';
import type { Space } from './host-state.ts';
import type { VMLimits } from './limits.ts';
import type { FuncType, InstanceStatePlan } from './wasm-binary.ts';

/** The cloneable part of a `CallRequest` (the views stay on the main thread). */
export interface CallRequestData {
  method: string;
  input: Uint8Array;
  contextId: Uint8Array;
  executorId: Uint8Array;
  deviceId: Uint8Array;
  readOnly: boolean;
  xcallOrigin?: Uint8Array;
}

/** The first message a worker gets: its bridge to the main thread, for every call it will run. */
export interface WorkerInit {
  type: 'init';
  port: MessagePort;
  /**
   * Int32Array(1 + MAX_BATCH) over a SharedArrayBuffer: [0] the bridge (0 = waiting, 1 = answer
   * posted), [1 + k] set when the batch's call k is to be skipped (its caller went away)
   */
  flag: SharedArrayBuffer;
  /** the runtime's limits, the same for every call */
  limits: VMLimits;
}

export interface CallJob {
  type: 'call';
  /** numbers the worker's calls: bridge answers carry it */
  seq: number;
  /** the compiled module's key (the runtime's module cache key) */
  moduleKey: string;
  /** present when this worker does not hold `moduleKey` yet */
  module?: { module: WebAssembly.Module; exportTypes: Record<string, FuncType>; reuse: InstanceStatePlan | null };
  /** modules the worker lets go (the main thread keeps the same bounded list per worker) */
  drop: string[];
  req: CallRequestData;
  /** the context's state version: reads under it may be answered from the worker's cache (state-cache.ts) */
  stateVersion?: number;
  /**
   * The worker last ran this context under another version: the current values (null: absent) of
   * the rows its cache held for it, read by the main thread; the worker keeps them under
   * `stateVersion` instead of starting the context over (issue #22).
   */
  refresh?: Array<[Space, Uint8Array, Uint8Array | null]>;
  /**
   * With `refresh`: the version the worker's cache of this context must hold for the refresh to
   * bring it up to date — `refresh` then holds every row written since, and the worker keeps the
   * rest of what it holds under `stateVersion` (issue #33). Absent: it keeps only `refresh`.
   */
  carryFrom?: number;
  hasIndexMeta: boolean;
  hasBlobs: boolean;
  /** the node can open envelopes (`open_sealed`); absent = the runtime has no sealing access */
  hasSealing?: boolean;
}

/**
 * Read-only calls of one context run one after the other by one worker (batch-run.ts): each as a
 * `CallJob` alone, answered each as it is done. Position k may be skipped: the runtime sets
 * `flag[1 + k]` (the worker's flag, protocol's `WorkerInit`) when its caller went away.
 */
export interface BatchJob {
  type: 'batch';
  jobs: CallJob[];
}

/** Calls one batch holds at most (the worker's flag has a skip place for each). */
export const MAX_BATCH = 16;

/** Readies a module in a worker ahead of its first call there (`WasmRuntime.prepare`): kept, and its instance made. */
export interface LoadJob {
  type: 'load';
  moduleKey: string;
  module: NonNullable<CallJob['module']>;
  drop: string[];
}

export type BridgeRequest =
  | { op: 'get'; space: Space; key: Uint8Array }
  | { op: 'range'; lo: Uint8Array; hi: Uint8Array | undefined; limit: number }
  | { op: 'blobRead'; fd: bigint; blobId: Uint8Array; max: number }
  | { op: 'blobHas'; blobId: Uint8Array }
  | { op: 'blobFetch'; blobId: Uint8Array; contextId: Uint8Array }
  | { op: 'blobPut'; bytes: Uint8Array }
  | { op: 'openSealed'; envelope: Uint8Array };

/**
 * A bridge request as posted: `id` numbers the worker's asks (its answer carries it back), `seq` is
 * the asking call's (a batch's calls each read their own views).
 */
export type AskedRequest = BridgeRequest & { id: number; seq: number };

/** `seq` is the call's, `id` the ask's: a worker drops an answer that matches neither. */
export type BridgeResponse = ({ ok: true; value: unknown } | { ok: false; error: string }) & { seq: number; id: number };

export interface JobDone {
  type: 'result';
  seq: number;
  result: CallResult;
  /** instances this call created (0 when it ran on a kept one) */
  created?: number;
  /** blocking reads this call asked the main thread for */
  asks?: number;
  /** the call did not run: its caller went away while it waited in its batch */
  skipped?: boolean;
  /**
   * rows the call read (at most HOT_ROWS), each as its row id (`rowId`): what the main thread
   * refreshes for this worker under the next version. Strings, not byte arrays: a string clones
   * flat, where each byte array cost a copy here, an ArrayBuffer on the main thread and an
   * encoding there to look the row up (issue #33)
   */
  read?: string[];
}

/**
 * A row's id: its space and its key's bytes as latin1 (one character per byte, so distinct keys
 * have distinct ids and the key is recovered exactly by `rowOf`). The state cache and the main
 * thread's hot rows know rows by it.
 */
export const rowId = (space: Space, key: Uint8Array): string => `${space}:${Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1')}`;

/** The space and key of a row id. */
export function rowOf(id: string): [Space, Uint8Array] {
  const colon = id.indexOf(':');
  return [id.slice(0, colon) as Space, new Uint8Array(Buffer.from(id.slice(colon + 1), 'latin1'))];
}

/** Rows of a context a worker's cache is refreshed with at most, when the context's version moved. */
export const HOT_ROWS = 64;
