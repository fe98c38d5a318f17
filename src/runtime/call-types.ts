/**
 * The types of one application call, as the contexts domain and the WebAssembly host exchange them
 * (`Runtime`, `CallRequest`, `CallResult`; shared/reference/runtime.md §2–§3). The host runs one method call of a guest module and answers what happened; it never
 * persists anything itself: the caller applies `writes` atomically with the new root hash, or
 * discards them when the call failed.
 */

/** A read-only view of a keyspace at the start of the call (the host overlays the call's own writes). */
export interface StateView {
  get(key: Uint8Array): Promise<Uint8Array | undefined>;
}

/** An ordered, node-local, non-synced index (`storage_index_*`): the host asks for ranges. */
export interface IndexView extends StateView {
  /** entries with `start <= key < end` (end absent = to the end), ascending, at most `limit` */
  range(start: Uint8Array, end: Uint8Array | undefined, limit: number): Promise<Array<[Uint8Array, Uint8Array]>>;
}

export interface CallRequest {
  /** cache key for the compiled module (64 hex); a module is compiled once per application (+ service) */
  applicationId: string;
  /** loads the bytecode when the compiled module is not cached */
  wasm: () => Promise<Uint8Array>;
  method: string;
  /** the bytes `input(reg)` hands the guest (JSON of the call's arguments) */
  input: Uint8Array;
  /** 32 bytes */
  contextId: Uint8Array;
  /** 32 bytes: the account (what `executor_id` and `account_id` report, as the reference shims it) */
  executorId: Uint8Array;
  /** 32 bytes: the executing device's public key (`device_id`) */
  deviceId: Uint8Array;
  /** the context's replicated state (`storage_*`) */
  state: StateView;
  /** node-local private state (`private_storage_*`) */
  privateState: StateView;
  /** node-local ordered index (`storage_index_*`) */
  index: IndexView;
  /**
   * node-local validity markers of the ordered index (`storage_index_meta_*`), kept apart from the
   * index itself; absent = the meta functions answer "not persisted" (0)
   */
  indexMeta?: StateView;
  /** view calls: writes are dropped and a `commit` is refused */
  readOnly: boolean;
  /**
   * The caller runs the call under its context's shared lock and commits nothing it changed (a view
   * call, or the try of a method seen changing nothing: read-path.ts), as for `readOnly`: the
   * runtime may hand it to a worker in one message with other such calls of the context.
   */
  shared?: boolean;
  /**
   * A value that changes whenever the context's state, private state or index changes (equal
   * values: equal contents). With it, a worker may keep what calls of the context read and answer
   * later calls under the same version from memory; without it, every read asks the views.
   */
  stateVersion?: number;
  /**
   * The rows of the context written since an earlier `stateVersion`, each once (undefined: not
   * known any more). With it, a worker coming back to the context under a new version keeps what
   * it holds but for these rows, which are read again and sent with the job (issue #33).
   */
  changedSince?: (version: number) => Array<['state' | 'private' | 'index', Uint8Array]> | undefined;
  /** 32 bytes: the calling context when this call was dispatched by an `xcall` (`xcall_origin`) */
  xcallOrigin?: Uint8Array;
  /** wall-clock budget of the call; the host terminates the guest when it passes */
  deadlineMs?: number;
  signal?: AbortSignal;
}

export interface AppEvent {
  kind: string;
  data: Uint8Array;
  handler: string | null;
}

export interface XCall {
  contextId: Uint8Array;
  function: string;
  params: Uint8Array;
}

/** `null` value = the key was removed */
export type Writes = Array<[Uint8Array, Uint8Array | null]>;

export type FailureKind =
  | 'AppError' // value_return with tag 1: the application answered an error
  | 'Panic' // panic / panic_utf8
  | 'HostError' // a host function refused (limits, bad memory access, bad UTF-8 ...)
  | 'WasmTrap' // unreachable, out of bounds, stack overflow ...
  | 'MethodNotFound'
  | 'InvalidMethodName'
  | 'CompileError' // the module does not compile, imports memory, has _start, ...
  | 'Deadline' // the wall-clock budget passed
  | 'Aborted';

export interface CallSuccess {
  ok: true;
  /** `value_return(Ok(bytes))`; null when the guest returned nothing */
  output: Uint8Array | null;
  logs: string[];
  events: AppEvent[];
  writes: Writes;
  privateWrites: Writes;
  indexWrites: Writes;
  /** set by `commit(root, artifact)`; absent for calls that did not commit */
  commit: { rootHash: Uint8Array; artifact: Uint8Array } | null;
  xcalls: XCall[];
  /** writes to the index-meta view (only when the request gave one) */
  indexMetaWrites?: Writes;
  /** `emit_migration_witness`: carried on the outcome, never stored */
  migrationWitness?: Uint8Array;
}

export interface CallFailure {
  ok: false;
  kind: FailureKind;
  /**
   * The reference's display text, e.g. `guest panicked: <msg> at <file>:<line>:<col>` or
   * `the method call returned an error: [123, 34, ...]` (the Debug print of the bytes).
   */
  message: string;
  logs: string[];
}

export type CallResult = CallSuccess | CallFailure;

export interface Runtime {
  call(req: CallRequest): Promise<CallResult>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Compiles a module ahead of its first call, in the background, and readies a worker with it
   * (issue #22: the first call after a restart paid for the worker, the compile and the first
   * instance). `applicationId` and `wasm` as in {@link CallRequest}. Optional: a runtime without it
   * compiles on the first call.
   */
  prepare?(module: Pick<CallRequest, 'applicationId' | 'wasm'>): Promise<void>;
}
