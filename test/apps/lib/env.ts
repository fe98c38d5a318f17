// The `env` host functions, declared with exactly the reference's signatures (core
// `crates/sys/src/lib.rs`): every argument is an i64 (pointer to a descriptor, register id, fd),
// `Bool` results are i32 and `PtrSizedInt` results i64. AssemblyScript source, compiled by
// test/helpers/wasm-apps.ts; it only emits the imports an app actually calls.

@external("env", "panic") export declare function panic(loc: u64): void;
@external("env", "panic_utf8") export declare function panic_utf8(msg: u64, loc: u64): void;
@external("env", "register_len") export declare function register_len(reg: u64): u64;
@external("env", "read_register") export declare function read_register(reg: u64, buf: u64): u32;
@external("env", "context_id") export declare function context_id(reg: u64): void;
@external("env", "executor_id") export declare function executor_id(reg: u64): void;
@external("env", "account_id") export declare function account_id(reg: u64): void;
@external("env", "device_id") export declare function device_id(reg: u64): void;
@external("env", "xcall_origin") export declare function xcall_origin(reg: u64): u32;
@external("env", "input") export declare function input(reg: u64): void;
@external("env", "value_return") export declare function value_return(value: u64): void;
@external("env", "emit_migration_witness") export declare function emit_migration_witness(blob: u64): void;
@external("env", "log_utf8") export declare function log_utf8(msg: u64): void;
@external("env", "emit") export declare function emit(event: u64): void;
@external("env", "emit_with_handler") export declare function emit_with_handler(event: u64, handler: u64): void;
@external("env", "xcall") export declare function xcall(call: u64): void;
@external("env", "commit") export declare function commit(root: u64, artifact: u64): void;
@external("env", "storage_read") export declare function storage_read(key: u64, reg: u64): u32;
@external("env", "storage_remove") export declare function storage_remove(key: u64, reg: u64): u32;
@external("env", "storage_write") export declare function storage_write(key: u64, value: u64, reg: u64): u32;
@external("env", "storage_index_set") export declare function storage_index_set(key: u64, value: u64): u32;
@external("env", "storage_index_remove") export declare function storage_index_remove(key: u64): u32;
@external("env", "storage_index_remove_prefix") export declare function storage_index_remove_prefix(prefix: u64): u32;
@external("env", "storage_index_scan") export declare function storage_index_scan(lo: u64, hi: u64, offset: u64, limit: u64, reg: u64): u32;
@external("env", "storage_index_last") export declare function storage_index_last(lo: u64, hi: u64, reg: u64): u32;
@external("env", "storage_index_meta_set") export declare function storage_index_meta_set(key: u64, value: u64): u32;
@external("env", "storage_index_meta_get") export declare function storage_index_meta_get(key: u64, reg: u64): u32;
@external("env", "storage_index_meta_clear") export declare function storage_index_meta_clear(key: u64): u32;
@external("env", "search_query") export declare function search_query(request: u64, reg: u64): u32;
@external("env", "private_storage_read") export declare function private_storage_read(key: u64, reg: u64): u32;
@external("env", "private_storage_remove") export declare function private_storage_remove(key: u64, reg: u64): u32;
@external("env", "private_storage_write") export declare function private_storage_write(key: u64, value: u64): u32;
@external("env", "random_bytes") export declare function random_bytes(buf: u64): void;
@external("env", "tee_origin") export declare function tee_origin(): u32;
@external("env", "tee_random_bytes") export declare function tee_random_bytes(buf: u64): void;
@external("env", "tee_authority_keys") export declare function tee_authority_keys(reg: u64): void;
@external("env", "time_now") export declare function time_now(buf: u64): void;
@external("env", "ed25519_verify") export declare function ed25519_verify(sig: u64, pk: u64, msg: u64): u32;
@external("env", "seal_to") export declare function seal_to(key: u64, plaintext: u64, reg: u64): u32;
@external("env", "open_sealed") export declare function open_sealed(sealed: u64, reg: u64): u32;
@external("env", "blob_create") export declare function blob_create(): u64;
@external("env", "blob_open") export declare function blob_open(id: u64): u64;
@external("env", "blob_read") export declare function blob_read(fd: u64, buf: u64): u64;
@external("env", "blob_write") export declare function blob_write(fd: u64, data: u64): u64;
@external("env", "blob_close") export declare function blob_close(fd: u64, id: u64): u32;
@external("env", "blob_announce_to_context") export declare function blob_announce_to_context(id: u64, ctx: u64): u32;
@external("env", "blob_open_in_context") export declare function blob_open_in_context(id: u64, ctx: u64): u64;
@external("env", "fetch") export declare function fetch(url: u64, method: u64, headers: u64, body: u64, reg: u64): u32;
