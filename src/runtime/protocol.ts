/**
 * The messages between the runtime (main thread) and its workers. A call's data is posted with the
 * compiled `WebAssembly.Module`; the worker's synchronous reads go over a per-call `MessagePort`:
 * the worker posts a {@link BridgeRequest}, blocks in `Atomics.wait` on the call's shared flag, and
 * takes the answer with `receiveMessageOnPort` once the main thread has posted it and notified.
 */
import type { CallResult } from './contract.ts';
import type { Space } from './host-state.ts';
import type { VMLimits } from './limits.ts';
import type { FuncType } from './wasm-binary.ts';

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

export interface CallJob {
  type: 'call';
  module: WebAssembly.Module;
  /** the type of every exported function, by name */
  exportTypes: Record<string, FuncType>;
  req: CallRequestData;
  limits: VMLimits;
  hasIndexMeta: boolean;
  hasBlobs: boolean;
  /** the node can open envelopes (`open_sealed`); absent = the runtime has no sealing access */
  hasSealing?: boolean;
  /** Int32Array(1) over a SharedArrayBuffer: 0 = waiting, 1 = answer posted */
  flag: SharedArrayBuffer;
  port: MessagePort;
}

export type BridgeRequest =
  | { op: 'get'; space: Space; key: Uint8Array }
  | { op: 'range'; lo: Uint8Array; hi: Uint8Array | undefined; limit: number }
  | { op: 'blobRead'; fd: bigint; blobId: Uint8Array; max: number }
  | { op: 'blobHas'; blobId: Uint8Array }
  | { op: 'blobFetch'; blobId: Uint8Array; contextId: Uint8Array }
  | { op: 'blobPut'; bytes: Uint8Array }
  | { op: 'openSealed'; envelope: Uint8Array };

export type BridgeResponse = { ok: true; value: unknown } | { ok: false; error: string };

export interface JobDone {
  type: 'result';
  result: CallResult;
}
