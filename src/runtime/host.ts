/**
 * The `env` host functions a Rust-SDK guest imports (runtime.md §2; core
 * `crates/runtime/src/logic/host_functions/*.rs`, guest declarations in core `crates/sys/src/lib.rs`).
 *
 * Every pointer, length, register id and blob fd arrives as a BigInt (wasm i64); i64 results are
 * returned as BigInt and i32 results as numbers. `*_ptr` arguments point at descriptors (Buffer =
 * `ptr u64, len u64`), never at the data. Guest memory is re-read on every access because a
 * `memory.grow` detaches the previous `ArrayBuffer`. Any refusal throws a {@link Trap}, which
 * unwinds the guest and fails the call.
 */
import { randomFillSync } from 'node:crypto';
import { ed25519Verify } from '../crypto/keys.ts';
import type { CallRequestData } from './protocol.ts';
import { HostState, compareBytes, hex, type HostFn, type Space, type SyncBackend } from './host-state.ts';
import { isEd25519Point } from './ed25519.ts';
import { blobImports } from './host-blobs.ts';
import { sealingImports } from './host-sealing.ts';
import { GuestMemory } from './guest-memory.ts';
import { HostErrors, hostError, panicMessage } from './trap.ts';

const FETCH_BLOCKED = "Host function 'fetch' is temporarily disabled.";

export interface Host {
  imports: Record<string, HostFn>;
  state: HostState;
}

/**
 * Builds the host for one call. `memory()` answers the instance's exported memory once it exists
 * (host calls from a start function, before it is attached, trap as invalid memory access);
 * `visibleBytes()` how much of it the guest sees (a reused instance, instances.ts); `wrote` is told
 * every range of it the host writes (a kept instance puts back only what the call wrote).
 */
export function createHost(
  req: CallRequestData,
  backend: SyncBackend,
  state: HostState,
  memory: () => WebAssembly.Memory | undefined,
  visibleBytes?: () => number | undefined,
  wrote?: (from: number, to: number) => void,
): Host {
  const limits = state.limits;

  const m = new GuestMemory(memory, visibleBytes, wrote);
  const { desc, read, readSized, write, str, location } = m;
  const key = (ptr: bigint): Uint8Array => {
    const d = desc(ptr);
    if (d.len > limits.maxStorageKeySize) throw HostErrors.keyLengthOverflow();
    return read(d);
  };
  const value = (ptr: bigint): Uint8Array => {
    const d = desc(ptr);
    if (d.len > limits.maxStorageValueSize) throw HostErrors.valueLengthOverflow();
    return read(d);
  };

  /** the current value of `k` in `space`: the call's own write, else the view at call start */
  const lookup = (space: Space, k: Uint8Array): Uint8Array | undefined => {
    const own = state.overlays[space].lookup(k);
    if (own !== undefined) return own ?? undefined;
    return backend.get(space, k);
  };
  /** View calls drop writes (the reference runs them on `ReadOnlyContextStorage`). */
  const record = (space: Space, k: Uint8Array, v: Uint8Array | null): void => {
    if (!req.readOnly) state.overlays[space].set(k, v);
  };
  const toRegister = (reg: bigint, data: Uint8Array | undefined): number => {
    if (data === undefined) return 0;
    state.setRegister(reg, data);
    return 1;
  };

  /** `[lo, hi)` of the index as the call sees it: base entries merged with the call's own writes */
  const indexRange = (lo: Uint8Array, hi: Uint8Array | undefined, want: number): Array<[Uint8Array, Uint8Array]> => {
    const own = state.overlays.index.within(lo, hi);
    // the base may hold keys the call removed: ask for enough to still fill `want`
    const base = backend.range(lo, hi, want === Infinity ? Number.MAX_SAFE_INTEGER : want + own.length);
    const merged = new Map<string, [Uint8Array, Uint8Array | null]>();
    for (const [k, v] of base) merged.set(hex(k), [k, v]);
    for (const [k, v] of own) merged.set(hex(k), [k, v]);
    return [...merged.values()]
      .filter((e): e is [Uint8Array, Uint8Array] => e[1] !== null)
      .sort((a, b) => compareBytes(a[0], b[0]));
  };
  const encodePairs = (pairs: Array<[Uint8Array, Uint8Array]>): Uint8Array => {
    const size = 4 + pairs.reduce((n, [k, v]) => n + 8 + k.length + v.length, 0);
    const out = new Uint8Array(size);
    const dv = new DataView(out.buffer);
    dv.setUint32(0, pairs.length, true);
    let at = 4;
    for (const [k, v] of pairs) {
      dv.setUint32(at, k.length, true);
      out.set(k, at + 4);
      at += 4 + k.length;
      dv.setUint32(at, v.length, true);
      out.set(v, at + 4);
      at += 4 + v.length;
    }
    return out;
  };
  const upperBound = (hiPtr: bigint): Uint8Array | undefined => {
    const hi = key(hiPtr);
    return hi.length === 0 ? undefined : hi;
  };

  const imports: Record<string, HostFn> = {
    // --- panics
    panic(locPtr) {
      throw panicMessage('guest', 'explicit panic', location(locPtr));
    },
    panic_utf8(msgPtr, locPtr) {
      const message = str(desc(msgPtr));
      throw panicMessage('guest', message, location(locPtr));
    },

    // --- registers
    register_len(reg) {
      const r = state.registers.get(reg);
      return r ? BigInt(r.length) : -1n; // u64::MAX
    },
    read_register(reg, dstPtr) {
      const r = state.registers.get(reg);
      if (!r) throw HostErrors.invalidRegisterId(reg);
      const d = desc(dstPtr);
      if (d.len !== r.length) return 0;
      write(d, r);
      return 1;
    },

    // --- identity
    context_id(reg) {
      state.setRegister(reg, req.contextId);
    },
    // current merod answers the account here (a compatibility shim, runtime.md §2)
    executor_id(reg) {
      state.setRegister(reg, req.executorId);
    },
    account_id(reg) {
      state.setRegister(reg, req.executorId);
    },
    device_id(reg) {
      state.setRegister(reg, req.deviceId);
    },
    xcall_origin(reg) {
      if (!req.xcallOrigin) return 0;
      state.setRegister(reg, req.xcallOrigin);
      return 1;
    },

    // --- input / output
    input(reg) {
      state.setRegister(reg, req.input);
    },
    value_return(ptr) {
      const v = m.struct(ptr, 24);
      const tag = v.getBigUint64(0, true);
      if (tag !== 0n && tag !== 1n) throw hostError('deserialization error');
      const d = m.sliceAt(v, 8);
      if (d.len > limits.maxReturnValueSize) throw HostErrors.returnValueTooLarge(d.len, limits.maxReturnValueSize);
      state.returned = { ok: tag === 0n, bytes: read(d) };
    },
    emit_migration_witness(ptr) {
      const d = desc(ptr);
      if (d.len > limits.maxMigrationWitnessSize) throw HostErrors.returnValueTooLarge(d.len, limits.maxMigrationWitnessSize);
      state.migrationWitness = read(d);
    },
    log_utf8(ptr) {
      const d = desc(ptr);
      if (state.logs.length >= limits.maxLogs) throw HostErrors.logsOverflow();
      if (d.len > limits.maxLogSize) throw HostErrors.logLengthOverflow();
      state.logs.push(str(d));
    },

    // --- events and cross-context calls
    emit(ptr) {
      emitEvent(ptr, null);
    },
    emit_with_handler(ptr, handlerPtr) {
      const h = desc(handlerPtr);
      if (h.len > limits.maxEventHandlerSize) throw HostErrors.handlerTooLarge(h.len, limits.maxEventHandlerSize);
      emitEvent(ptr, str(h));
    },
    xcall(ptr) {
      const v = m.struct(ptr, 48);
      const ctx = m.sliceAt(v, 0);
      const fn = m.sliceAt(v, 16);
      const params = m.sliceAt(v, 32);
      if (state.xcalls.length >= limits.maxXCalls) throw HostErrors.xcallsOverflow();
      if (fn.len > limits.maxXCallFunctionSize) throw HostErrors.xcallFunctionSizeOverflow();
      if (params.len > limits.maxXCallParamsSize) throw HostErrors.xcallParamsSizeOverflow();
      state.xcalls.push({ contextId: readSized(ctx, 32), function: str(fn), params: read(params) });
    },

    // --- commit
    commit(rootPtr, artifactPtr) {
      const root = desc(rootPtr);
      const artifact = desc(artifactPtr);
      if (req.readOnly) throw HostErrors.commitInView();
      if (state.commit) throw HostErrors.commitTwice();
      if (artifact.len > limits.maxArtifactSize) throw HostErrors.artifactTooLarge(artifact.len, limits.maxArtifactSize);
      state.commit = { rootHash: readSized(root, 32), artifact: read(artifact) };
    },

    // --- replicated storage
    storage_read(keyPtr, reg) {
      return toRegister(reg, lookup('state', key(keyPtr)));
    },
    storage_write(keyPtr, valuePtr, reg) {
      const k = key(keyPtr);
      const v = value(valuePtr);
      state.chargeWrite(k.length + v.length);
      const old = lookup('state', k);
      record('state', k, v);
      return toRegister(reg, old);
    },
    storage_remove(keyPtr, reg) {
      const k = key(keyPtr);
      const old = lookup('state', k);
      if (old !== undefined) record('state', k, null);
      return toRegister(reg, old);
    },

    // --- private (node-local) storage
    private_storage_read(keyPtr, reg) {
      return toRegister(reg, lookup('private', key(keyPtr)));
    },
    private_storage_write(keyPtr, valuePtr) {
      const k = key(keyPtr);
      const v = value(valuePtr);
      state.chargeWrite(k.length + v.length);
      record('private', k, v);
      return req.readOnly ? 0 : 1;
    },
    private_storage_remove(keyPtr, reg) {
      const k = key(keyPtr);
      const old = lookup('private', k);
      if (old !== undefined) record('private', k, null);
      return toRegister(reg, old);
    },

    // --- ordered index (node-local); writes answer 1 when persisted, 0 when dropped (views)
    storage_index_set(keyPtr, valuePtr) {
      const k = key(keyPtr);
      const v = value(valuePtr);
      state.chargeWrite(k.length + v.length);
      record('index', k, v);
      return req.readOnly ? 0 : 1;
    },
    storage_index_remove(keyPtr) {
      record('index', key(keyPtr), null);
      return req.readOnly ? 0 : 1;
    },
    storage_index_remove_prefix(prefixPtr) {
      const prefix = key(prefixPtr);
      if (req.readOnly) return 0;
      for (const [k] of indexRange(prefix, prefixEnd(prefix), Infinity)) record('index', k, null);
      return 1;
    },
    storage_index_scan(loPtr, hiPtr, offset, limit, reg) {
      const lo = key(loPtr);
      const hi = upperBound(hiPtr);
      // limit is `n + 1`-encoded: 0 = unbounded
      const skip = offset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(offset);
      const max = limit === 0n ? Infinity : Number(BigInt.asUintN(64, limit) - 1n);
      const want = max === Infinity ? Infinity : skip + max;
      const rows = indexRange(lo, hi, want).slice(skip, max === Infinity ? undefined : skip + max);
      state.setRegister(reg, encodePairs(rows));
      return 1;
    },
    storage_index_last(loPtr, hiPtr, reg) {
      const rows = indexRange(key(loPtr), upperBound(hiPtr), Infinity);
      state.setRegister(reg, encodePairs(rows.length ? [rows[rows.length - 1]] : []));
      return 1;
    },
    storage_index_meta_set(keyPtr, valuePtr) {
      const k = key(keyPtr);
      const v = value(valuePtr);
      if (!backend.hasIndexMeta || req.readOnly) return 0;
      record('indexMeta', k, v);
      return 1;
    },
    storage_index_meta_get(keyPtr, reg) {
      const k = key(keyPtr);
      if (!backend.hasIndexMeta) return 0;
      return toRegister(reg, lookup('indexMeta', k));
    },
    storage_index_meta_clear(keyPtr) {
      const k = key(keyPtr);
      if (!backend.hasIndexMeta || req.readOnly) return 0;
      record('indexMeta', k, null);
      return 1;
    },
    search_query() {
      throw HostErrors.searchUnavailable();
    },

    // --- utility
    random_bytes(ptr) {
      const d = desc(ptr);
      const out = new Uint8Array(d.len);
      randomFillSync(out);
      write(d, out);
    },
    time_now(ptr) {
      const d = desc(ptr);
      if (d.len !== 8) throw HostErrors.invalidMemoryAccess();
      const out = new Uint8Array(8);
      new DataView(out.buffer).setBigUint64(0, nowNanos(), true);
      write(d, out);
    },
    ed25519_verify(sigPtr, pkPtr, msgPtr) {
      const sig = readSized(desc(sigPtr), 64);
      const pk = readSized(desc(pkPtr), 32);
      const msg = read(desc(msgPtr));
      if (!isEd25519Point(pk)) throw HostErrors.ed25519IncorrectPublicKey();
      return ed25519Verify(hex(pk), msg, sig) ? 1 : 0;
    },
    fetch(_url, _method, _headers, _body, reg) {
      // blocked in the reference: failure status and the reason in the register, no request made
      state.setRegister(reg, new TextEncoder().encode(FETCH_BLOCKED));
      return 1;
    },
    tee_origin() {
      return 0;
    },
    tee_random_bytes() {
      throw HostErrors.teeOnly('tee_random_bytes');
    },
    tee_authority_keys() {
      throw HostErrors.teeOnly('tee_authority_keys');
    },

    ...blobImports(req, backend, state, m),
    ...sealingImports(backend, state, m),
  };

  function emitEvent(ptr: bigint, handler: string | null): void {
    const v = m.struct(ptr, 32);
    const kind = m.sliceAt(v, 0);
    const data = m.sliceAt(v, 16);
    if (state.events.length >= limits.maxEvents) throw HostErrors.eventsOverflow();
    if (kind.len > limits.maxEventKindSize) throw HostErrors.eventKindSizeOverflow();
    if (data.len > limits.maxEventDataSize) throw HostErrors.eventDataSizeOverflow();
    state.events.push({ kind: str(kind), data: read(data), handler });
  }

  return { imports, state };
}

/** the smallest key greater than every key starting with `prefix` (undefined: none) */
export function prefixEnd(prefix: Uint8Array): Uint8Array | undefined {
  const end = prefix.slice();
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i] += 1;
      return end.subarray(0, i + 1);
    }
  }
  return undefined;
}

function nowNanos(): bigint {
  const ms = performance.timeOrigin + performance.now();
  return BigInt(Math.floor(ms)) * 1_000_000n + BigInt(Math.floor((ms % 1) * 1_000_000));
}
