/**
 * The runtime's limits, as the reference's `VMLimits::default` (runtime.md §2 "Default limits" and
 * the host-function notes; core `crates/runtime/src/logic.rs`). The wall-clock deadline replaces the
 * reference's gas budget: V8 has no fuel, so a call is stopped by terminating its worker.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

export interface VMLimits {
  /** 64 KiB pages; applies to the initial size and to growth, whatever the module declares */
  maxMemoryPages: number;
  maxModuleSize: number;
  maxRegisters: number;
  maxRegisterSize: number;
  maxRegistersCapacity: number;
  maxLogs: number;
  maxLogSize: number;
  maxEvents: number;
  maxEventKindSize: number;
  maxEventDataSize: number;
  maxEventHandlerSize: number;
  maxXCalls: number;
  maxXCallFunctionSize: number;
  maxXCallParamsSize: number;
  maxStorageKeySize: number;
  maxStorageValueSize: number;
  maxReturnValueSize: number;
  maxArtifactSize: number;
  /** per-call write budget (storage_write, storage_index_set, private_storage_write) */
  maxStorageWriteCount: number;
  maxStorageWriteBytes: number;
  maxMethodNameLength: number;
  maxBlobHandles: number;
  maxBlobChunkSize: number;
  /** bytes a call may hold in unclosed blob writes */
  maxBlobWriteMemory: number;
  maxMigrationWitnessSize: number;
}

export const DEFAULT_LIMITS: Readonly<VMLimits> = Object.freeze({
  maxMemoryPages: 1024,
  maxModuleSize: 10 * MiB,
  maxRegisters: 100,
  maxRegisterSize: 100 * MiB,
  maxRegistersCapacity: 1024 * MiB,
  maxLogs: 1024,
  maxLogSize: 16 * KiB,
  maxEvents: 100,
  maxEventKindSize: 100,
  maxEventDataSize: 16 * KiB,
  maxEventHandlerSize: 256,
  maxXCalls: 8,
  maxXCallFunctionSize: 100,
  maxXCallParamsSize: 16 * KiB,
  maxStorageKeySize: 1 * MiB,
  maxStorageValueSize: 10 * MiB,
  maxReturnValueSize: 16 * MiB,
  maxArtifactSize: 16 * MiB,
  maxStorageWriteCount: 100_000,
  maxStorageWriteBytes: 128 * MiB,
  maxMethodNameLength: 256,
  maxBlobHandles: 100,
  maxBlobChunkSize: 10 * MiB,
  maxBlobWriteMemory: 100 * MiB,
  maxMigrationWitnessSize: 16 * MiB,
});

/** Default wall-clock budget of one call. */
export const DEFAULT_DEADLINE_MS = 10_000;
/** the least default pool: a context may use two workers while one stays free for the others */
export const DEFAULT_POOL_SIZE = 3;
/** calls waiting for a worker at most (issue #17 finding 8); config `runtime.queue_limit` */
export { DEFAULT_QUEUE_LIMIT } from '../config/defaults.ts';
/** compiled modules kept per runtime (LRU by application id) */
export const DEFAULT_MODULE_CACHE_SIZE = 32;
