/**
 * Access to a guest's linear memory from the host functions (runtime.md §2 "ABI descriptors"):
 * descriptors are little-endian u64 fields; every access bounds-checks and re-reads
 * `memory.buffer`, because a `memory.grow` detaches the previous `ArrayBuffer` (runtime.md §6).
 * An access outside memory is the reference's `invalid memory access` trap.
 */
import { HostErrors, Trap } from './trap.ts';

/** a `Buffer` descriptor: where the data is and how long */
export interface Slice {
  ptr: number;
  len: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export class GuestMemory {
  /**
   * `memory()` answers the instance's exported memory once it exists (undefined before);
   * `visible()`, when given, the bytes of it the guest sees (a reused instance's memory may be
   * larger than the size its guest sees, wasm-code.ts): the host never reads or writes past them.
   */
  constructor(
    private readonly memory: () => WebAssembly.Memory | undefined,
    private readonly visible?: () => number | undefined,
    /** told of every range the host writes (a kept instance then puts back only what was written, instances.ts) */
    private readonly wrote?: (from: number, to: number) => void,
  ) {}

  bytes = (): Uint8Array => {
    const m = this.memory();
    if (!m) throw HostErrors.invalidMemoryAccess();
    const seen = this.visible?.();
    return seen === undefined ? new Uint8Array(m.buffer) : new Uint8Array(m.buffer, 0, Math.min(seen, m.buffer.byteLength));
  };

  /** a guest address (wasm32: below 2^32) */
  addr = (p: bigint): number => {
    if (p < 0n || p > 0xffff_ffffn) throw HostErrors.invalidMemoryAccess();
    return Number(p);
  };

  /** `size` bytes of a descriptor struct at `ptr`, as a view */
  struct = (ptr: bigint, size: number): DataView => {
    const mem = this.bytes();
    const at = this.addr(ptr);
    if (at + size > mem.length) throw HostErrors.invalidMemoryAccess();
    return new DataView(mem.buffer, at, size);
  };

  /** the u64 field at `offset` of `view` as an address or length */
  u64 = (view: DataView, offset: number): number => {
    const v = view.getBigUint64(offset, true);
    if (v > 0xffff_ffffn) throw HostErrors.invalidMemoryAccess();
    return Number(v);
  };

  /** the `Buffer` descriptor at `offset` within `view` */
  sliceAt = (view: DataView, offset: number): Slice => ({ ptr: this.u64(view, offset), len: this.u64(view, offset + 8) });

  /** the `Buffer` descriptor at `ptr` */
  desc = (ptr: bigint): Slice => this.sliceAt(this.struct(ptr, 16), 0);

  read = (s: Slice): Uint8Array => {
    const mem = this.bytes();
    if (s.ptr + s.len > mem.length) throw HostErrors.invalidMemoryAccess();
    return mem.slice(s.ptr, s.ptr + s.len);
  };

  /** the reference's `read_guest_memory_sized`: exactly `size` bytes or invalid memory access */
  readSized = (s: Slice, size: number): Uint8Array => {
    if (s.len !== size) throw HostErrors.invalidMemoryAccess();
    return this.read(s);
  };

  write = (s: Slice, data: Uint8Array): void => {
    const mem = this.bytes();
    if (s.ptr + s.len > mem.length || data.length > s.len) throw HostErrors.invalidMemoryAccess();
    this.wrote?.(s.ptr, s.ptr + data.length);
    mem.set(data, s.ptr);
  };

  str = (s: Slice): string => {
    const raw = this.read(s);
    try {
      return utf8.decode(raw);
    } catch (e) {
      if (e instanceof Trap) throw e;
      throw HostErrors.badUtf8();
    }
  };

  /** a `Location` descriptor: file Buffer, line u32, column u32 */
  location = (ptr: bigint): { file: string; line: number; column: number } => {
    const v = this.struct(ptr, 24);
    return { file: this.str(this.sliceAt(v, 0)), line: v.getUint32(16, true), column: v.getUint32(20, true) };
  };
}
