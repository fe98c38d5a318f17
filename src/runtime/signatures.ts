/**
 * The exact wasm signatures of the host functions this runtime provides, as the reference declares
 * them (core `crates/sys/src/lib.rs` and `crates/runtime/src/logic/imports.rs`): every argument is
 * an i64 (pointer to a descriptor, register id, fd, offset); `Bool` results are i32 and
 * `PtrSizedInt` results i64. A guest import is linked only when its name and type match exactly.
 * Not provided (an import of them fails to link): the ~100 `js_*` functions and the state helpers of
 * JS-SDK apps, `account_device_keys`, `send_proposal`/`approve_proposal`.
 */
import type { FuncType } from './wasm-binary.ts';

const I = 'i64' as const;
const fn = (params: number, result?: 'i32' | 'i64'): FuncType => ({
  params: Array<'i64'>(params).fill(I),
  results: result ? [result] : [],
});

export const HOST_SIGNATURES: Readonly<Record<string, FuncType>> = Object.freeze({
  panic: fn(1),
  panic_utf8: fn(2),
  register_len: fn(1, 'i64'),
  read_register: fn(2, 'i32'),
  context_id: fn(1),
  executor_id: fn(1),
  account_id: fn(1),
  device_id: fn(1),
  xcall_origin: fn(1, 'i32'),
  input: fn(1),
  value_return: fn(1),
  emit_migration_witness: fn(1),
  log_utf8: fn(1),
  emit: fn(1),
  emit_with_handler: fn(2),
  xcall: fn(1),
  commit: fn(2),
  storage_read: fn(2, 'i32'),
  storage_remove: fn(2, 'i32'),
  storage_write: fn(3, 'i32'),
  storage_index_set: fn(2, 'i32'),
  storage_index_remove: fn(1, 'i32'),
  storage_index_remove_prefix: fn(1, 'i32'),
  storage_index_scan: fn(5, 'i32'),
  storage_index_last: fn(3, 'i32'),
  storage_index_meta_set: fn(2, 'i32'),
  storage_index_meta_get: fn(2, 'i32'),
  storage_index_meta_clear: fn(1, 'i32'),
  search_query: fn(2, 'i32'),
  private_storage_read: fn(2, 'i32'),
  private_storage_remove: fn(2, 'i32'),
  private_storage_write: fn(2, 'i32'),
  random_bytes: fn(1),
  tee_origin: fn(0, 'i32'),
  tee_random_bytes: fn(1),
  tee_authority_keys: fn(1),
  time_now: fn(1),
  ed25519_verify: fn(3, 'i32'),
  blob_create: fn(0, 'i64'),
  blob_open: fn(1, 'i64'),
  blob_read: fn(2, 'i64'),
  blob_write: fn(2, 'i64'),
  blob_close: fn(2, 'i32'),
  blob_announce_to_context: fn(2, 'i32'),
  blob_open_in_context: fn(2, 'i64'),
  fetch: fn(5, 'i32'),
  seal_to: fn(3, 'i32'),
  open_sealed: fn(2, 'i32'),
});

export const sameType = (a: FuncType, b: FuncType) =>
  a.params.length === b.params.length &&
  a.results.length === b.results.length &&
  a.params.every((t, i) => t === b.params[i]) &&
  a.results.every((t, i) => t === b.results[i]);

export const showType = (t: FuncType) => `(${t.params.join(', ')}) -> (${t.results.join(', ')})`;
