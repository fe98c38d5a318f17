/**
 * The per-call state behind the host functions (runtime.md §2 "Host function semantics"): the
 * registers, the call's write overlays (read-your-writes, reported in order), the write budget,
 * and the outcome being collected (return value, logs, events, xcalls, commit). One instance lives
 * for one call and is thrown away with it, as the reference builds a fresh `VMLogic` per call.
 */
import type { AppEvent, Writes, XCall } from './call-types.ts';
import type { VMLimits } from './limits.ts';
import type { OpenOutcome } from './sealing.ts';
import { HostErrors } from './trap.ts';

/** A host function as the guest's `env` imports see it (i64 arguments arrive as BigInt). */
export type HostFn = (...args: bigint[]) => bigint | number | void;

/** The keyspaces a call reads and writes. */
export type Space = 'state' | 'private' | 'index' | 'indexMeta';

/**
 * What the host needs from the outside world, synchronously (the worker bridges it to the main
 * thread's async views; unit tests answer it directly).
 */
export interface SyncBackend {
  get(space: Space, key: Uint8Array): Uint8Array | undefined;
  /** base index entries with `lo <= key < hi` (hi undefined = to the end), ascending, at most `limit` */
  range(lo: Uint8Array, hi: Uint8Array | undefined, limit: number): Array<[Uint8Array, Uint8Array]>;
  /** false when the caller gave no index-meta view (the meta functions then answer "not persisted") */
  readonly hasIndexMeta: boolean;
  /** false when the runtime has no blob access (`blob_*` then trap as the reference without a node client) */
  readonly hasBlobs: boolean;
  /** up to `max` next bytes of the blob behind read handle `fd` (empty at the end or when absent) */
  blobRead(fd: bigint, blobId: Uint8Array, max: number): Uint8Array;
  blobHas(blobId: Uint8Array): boolean;
  /** asks the context's peers when the blob is not held locally; true when it is available now */
  blobFetch(blobId: Uint8Array, contextId: Uint8Array): boolean;
  /** stores the bytes as a blob; its 32-byte id */
  blobPut(bytes: Uint8Array): Uint8Array;
  /** true when the node gave the runtime a key holder for `open_sealed` (absent = false) */
  readonly hasSealing?: boolean;
  /** opens an envelope with the key the node holds for the run's executor (see sealing.ts) */
  openSealed?(envelope: Uint8Array): OpenOutcome;
}

export const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/** A write overlay for one space: the last write per key, in the order the keys were last written. */
export class Overlay {
  private readonly entries = new Map<string, [Uint8Array, Uint8Array | null]>();
  lookup(key: Uint8Array): Uint8Array | null | undefined {
    return this.entries.get(hex(key))?.[1];
  }
  set(key: Uint8Array, value: Uint8Array | null): void {
    const k = hex(key);
    this.entries.delete(k);
    this.entries.set(k, [key.slice(), value === null ? null : value.slice()]);
  }
  /** entries with `lo <= key < hi`, unordered */
  within(lo: Uint8Array, hi: Uint8Array | undefined): Array<[Uint8Array, Uint8Array | null]> {
    return [...this.entries.values()].filter(([k]) => compareBytes(k, lo) >= 0 && (!hi || compareBytes(k, hi) < 0));
  }
  get size(): number {
    return this.entries.size;
  }
  writes(): Writes {
    return [...this.entries.values()];
  }
}

export interface ReadHandle {
  mode: 'read';
  blobId: Uint8Array;
}
export interface WriteHandle {
  mode: 'write';
  chunks: Uint8Array[];
  size: number;
}

export class HostState {
  readonly registers = new Map<bigint, Uint8Array>();
  private registerBytes = 0;
  readonly logs: string[] = [];
  readonly events: AppEvent[] = [];
  readonly xcalls: XCall[] = [];
  returned: { ok: boolean; bytes: Uint8Array } | null = null;
  commit: { rootHash: Uint8Array; artifact: Uint8Array } | null = null;
  migrationWitness: Uint8Array | null = null;
  readonly overlays: Record<Space, Overlay> = {
    state: new Overlay(),
    private: new Overlay(),
    index: new Overlay(),
    indexMeta: new Overlay(),
  };
  private writeCount = 0;
  private writeBytes = 0;
  readonly blobHandles = new Map<bigint, ReadHandle | WriteHandle>();
  nextBlobFd = 1n;
  blobWriteMemory = 0;

  constructor(readonly limits: VMLimits) {}

  setRegister(id: bigint, data: Uint8Array): void {
    const l = this.limits;
    const old = this.registers.get(id);
    if (!old && this.registers.size >= l.maxRegisters) throw HostErrors.invalidMemoryAccess();
    if (data.length > l.maxRegisterSize) throw HostErrors.invalidMemoryAccess();
    const total = this.registerBytes - (old?.length ?? 0) + data.length;
    if (total > l.maxRegistersCapacity) throw HostErrors.invalidMemoryAccess();
    this.registerBytes = total;
    this.registers.set(id, data.slice());
  }

  /** Charges one write of `bytes` against the call's budget (reference `write_meter.rs`). */
  chargeWrite(bytes: number): void {
    const l = this.limits;
    if (this.writeCount + 1 > l.maxStorageWriteCount) throw HostErrors.writeCountExceeded(l.maxStorageWriteCount);
    const attempted = this.writeBytes + bytes;
    if (attempted > l.maxStorageWriteBytes) throw HostErrors.writeBytesExceeded(attempted, l.maxStorageWriteBytes);
    this.writeCount += 1;
    this.writeBytes = attempted;
  }
}
