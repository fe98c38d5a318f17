// asc-flags: --memoryBase 1048576
// The "real-app-shaped" kv-store (issue #22): a key-value application that behaves, towards the
// host, like the reference Rust SDK's output for its kv-store example (core `apps/kv-store`
// compiled to wasm32), where test/apps/kv.ts only matches its methods and kv_flat.ts is the
// constant-cost bench app. What makes it "real-app-shaped":
//
// - Memory grows in every call. A Rust guest's allocator (dlmalloc) takes its heap with
//   `memory.grow` past the memory a fresh instance has, so a fresh instance has no heap and every
//   call grows the memory. Here the data is placed 1 MiB up (the build flag above, where a Rust
//   guest keeps its stack, so a fresh instance has 17 pages, about the reference's 18), the heap
//   (AssemblyScript's bump allocator) starts right after it, and every method first claims a
//   64 KiB chunk (`claimHeap`), which never fits in what is left of the last page: the allocator
//   grows the memory (doubling it, as the reference's grows 18 -> 36 pages on `init`).
// - The map's index is one storage entry (`kv:state`, the live keys in `entries` order) that every
//   `set` rewrites, plus one entry per value (`kv:item:<key>`) and per stamp (`kv:stamp:<key>`).
// - Many small host calls per method: the reference storage crate derives ids from the context,
//   stamps each saved entity with the time and the executor, and after every row it saves re-reads
//   and rewrites the Merkle index rows on the path root -> map -> element (`savePath`), keeping
//   nothing in the guest between those steps. A `get` of a present key makes 26 host calls, 6 of
//   them `storage_read`; a `set` about 240, 53 of them `storage_read` (counted by
//   src/runtime/kv-store-app.test.ts; the reference's: 26 / 6 and ~250 / 52).
//
// Replication is the kv app's (test/apps/lib/kvstore.ts, docs/runtime.md "Replicating the
// kv-store"): the same last-writer-wins operations in the same artifact, merged by
// `__calimero_sync_next`. The rows this app adds are functions of the live entries, so replicas
// that saw the same operations hold the same rows:
//   kv:meta           the root entity's record (a constant, written by `init` or the first merge)
//   kv:idx:root       the root's index: a hash of the map's index and the root record
//   kv:idx:map        the map's index: a hash of the lane sums (`kv:sum`) of the live entries
//   kv:idx:e:<key>    a live element's index: a hash of `key=value`
// Methods: init, set, get, entries, len, remove, clear, get_result (an application error),
// get_unchecked (a panic); events Inserted/Updated/Removed/Cleared as the kv app. Like the
// reference kv-store's ABI, no method is marked read-only.
// AssemblyScript source; built by test/helpers/wasm-apps.ts with its ABI (kv_store.abi.json).
import * as env from './lib/env';
import * as sdk from './lib/sdk';
import { decodeArtifact } from './lib/kvop';
import { commitState, getItem, ITEM, keysOf, mergeOp, putLocal, removeLocal, saveKeys, STATE_KEY, SUM } from './lib/kvstore';

const META = 'kv:meta';
const META_VALUE = 'kv_store/1';
const ROOT_IDX = 'kv:idx:root';
const MAP_IDX = 'kv:idx:map';
const ELEMENT_IDX = 'kv:idx:e:';
/** what the allocator takes from the host at a call's first allocation (dlmalloc's granularity) */
const HEAP_CHUNK: usize = 64 * 1024;

// --- the shape of a Rust guest

/** A call's first allocation: the heap of a fresh instance is empty, so this grows the memory. */
function claimHeap(): void {
  heap.alloc(HEAP_CHUNK);
}

/** the context id, asked of the host each time (the storage crate derives entity ids from it) */
function contextId(): ArrayBuffer {
  env.context_id(sdk.REG);
  return sdk.readRegister();
}

/** the time and the executor every saved entity is stamped with (the storage crate's HLC) */
function entityStamp(): void {
  const b = new ArrayBuffer(8);
  env.time_now(sdk.buf(b));
  env.executor_id(sdk.REG);
  sdk.readRegister();
}

function read(key: string): ArrayBuffer | null {
  return sdk.storageRead(sdk.utf8(key));
}

function hash32(data: ArrayBuffer): ArrayBuffer {
  const out = new ArrayBuffer(32);
  const u = Uint8Array.wrap(data);
  for (let lane = 0; lane < 4; lane++) {
    let h: u64 = 0xcbf29ce484222325 ^ (<u64>(lane + 7) * 0x9e3779b97f4a7c15);
    for (let j = 0; j < u.length; j++) h = (h ^ <u64>u[j]) * 0x100000001b3;
    store<u64>(changetype<usize>(out) + lane * 8, h);
  }
  return out;
}

function concat(a: ArrayBuffer | null, b: ArrayBuffer | null): ArrayBuffer {
  const x = a === null ? new ArrayBuffer(0) : a!;
  const y = b === null ? new ArrayBuffer(0) : b!;
  const out = new ArrayBuffer(x.byteLength + y.byteLength);
  memory.copy(changetype<usize>(out), changetype<usize>(x), x.byteLength);
  memory.copy(changetype<usize>(out) + x.byteLength, changetype<usize>(y), y.byteLength);
  return out;
}

/** The root entity and its index, as `Root::fetch` loads them; no root record means no state. */
function loadRoot(): void {
  contextId();
  if (read(META) === null) sdk.panic('Failed to find or read app state', 'apps/kv-store/src/lib.rs', 16, 1);
  read(ROOT_IDX);
}

/** the map entity (its index entry, the live keys) and the map's own index row */
function loadMap(): string[] {
  const keys = keysOf();
  read(MAP_IDX);
  return keys;
}

/**
 * The Merkle bookkeeping after one saved row: from the element (when `key` is given) up to the
 * root, each level reads its ancestors' index rows, its own, and what its hash covers, then
 * writes its index row. Every row written is a function of the live entries.
 */
function savePath(key: string | null): void {
  entityStamp();
  if (key !== null) {
    contextId();
    read(ROOT_IDX);
    read(MAP_IDX);
    read(ELEMENT_IDX + key!);
    const value = read(ITEM + key!);
    if (value === null) sdk.storageRemove(sdk.utf8(ELEMENT_IDX + key!));
    else sdk.storageWrite(sdk.utf8(ELEMENT_IDX + key!), hash32(concat(sdk.utf8(key! + '='), value)));
  }
  contextId();
  read(ROOT_IDX);
  read(MAP_IDX);
  sdk.storageWrite(sdk.utf8(MAP_IDX), hash32(concat(read(SUM), null)));
  contextId();
  read(ROOT_IDX);
  sdk.storageWrite(sdk.utf8(ROOT_IDX), hash32(concat(read(MAP_IDX), read(META))));
}

function requireString(args: string, method: string, field: string): string {
  const v = sdk.jsonString(args, field);
  if (v === null) sdk.panic(method + ': failed to deserialize arguments: missing field `' + field + '`');
  return v!;
}

/** the key's value, through its element index as the storage crate reads an entry */
function lookup(key: string): string | null {
  read(ELEMENT_IDX + key);
  return getItem(key);
}

// --- methods

export function __calimero_register_merge(): void {}

export function init(): void {
  claimHeap();
  sdk.noArguments('init');
  contextId();
  if (read(META) !== null) sdk.panic('Cannot initialize over already existing state.');
  sdk.storageWrite(sdk.utf8(META), sdk.utf8(META_VALUE));
  saveKeys([]);
  savePath(null);
  commitState();
}

export function set(): void {
  claimHeap();
  const args = sdk.readInput();
  const key = requireString(args, 'set', 'key');
  const value = requireString(args, 'set', 'value');
  loadRoot();
  const keys = loadMap();
  sdk.log('Setting key: ' + sdk.quote(key) + ' to value: ' + sdk.quote(value));
  const existed = putLocal(key, value);
  if (!existed) keys.push(key);
  // the map's index entry is saved on every insert or update (its child's hash changed)
  saveKeys(keys);
  savePath(key); // the element's stamp row
  savePath(key); // the element's value row
  savePath(key); // the element's index row
  savePath(null); // the map's index entry
  savePath(null); // the root's clock and sums
  sdk.emit(existed ? 'Updated' : 'Inserted', '{"key":' + sdk.quote(key) + ',"value":' + sdk.quote(value) + '}');
  sdk.returnOk('null');
  commitState();
}

export function get(): void {
  claimHeap();
  const key = requireString(sdk.readInput(), 'get', 'key');
  loadRoot();
  loadMap();
  sdk.log('Getting key: ' + sdk.quote(key));
  const v = lookup(key);
  sdk.returnOk(v === null ? 'null' : sdk.quote(v!));
}

export function entries(): void {
  claimHeap();
  sdk.noArguments('entries');
  loadRoot();
  const keys = loadMap();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out += ',';
    out += sdk.quote(keys[i]) + ':' + sdk.quote(lookup(keys[i])!);
  }
  sdk.returnOk(out + '}');
}

export function len(): void {
  claimHeap();
  sdk.noArguments('len');
  loadRoot();
  sdk.returnOk(loadMap().length.toString());
}

export function remove(): void {
  claimHeap();
  const key = requireString(sdk.readInput(), 'remove', 'key');
  loadRoot();
  const keys = loadMap();
  sdk.log('Removing key: ' + sdk.quote(key));
  const old = removeLocal(key);
  if (old !== null) {
    const rest: string[] = [];
    for (let i = 0; i < keys.length; i++) if (keys[i] != key) rest.push(keys[i]);
    saveKeys(rest);
    savePath(key);
    savePath(null);
    sdk.emit('Removed', '{"key":' + sdk.quote(key) + '}');
    sdk.returnOk(sdk.quote(old!));
    commitState();
    return;
  }
  sdk.returnOk('null');
  commitState();
}

export function clear(): void {
  claimHeap();
  sdk.noArguments('clear');
  loadRoot();
  const keys = loadMap();
  for (let i = 0; i < keys.length; i++) {
    removeLocal(keys[i]);
    savePath(keys[i]);
  }
  saveKeys([]);
  savePath(null);
  if (keys.length > 0) sdk.emit('Cleared', '');
  commitState();
}

export function get_result(): void {
  claimHeap();
  const key = requireString(sdk.readInput(), 'get_result', 'key');
  loadRoot();
  loadMap();
  const v = lookup(key);
  if (v === null) sdk.returnErr('{"data":' + sdk.quote(key) + ',"kind":"NotFound"}');
  else sdk.returnOk(sdk.quote(v!));
}

export function get_unchecked(): void {
  claimHeap();
  const key = requireString(sdk.readInput(), 'get_unchecked', 'key');
  loadRoot();
  loadMap();
  const v = lookup(key);
  if (v === null) sdk.panic('key not found', 'apps/kv-store/src/lib.rs', 133, 33);
  sdk.returnOk(sdk.quote(v!));
}

/**
 * Applies a remote delta (the kv app's artifact, test/apps/lib/kvop.ts): each operation merges
 * last-writer-wins, then the index rows of every key it touched are brought up to date. A context
 * without state (a joiner applying the genesis delta first) starts from the empty state.
 */
export function __calimero_sync_next(): void {
  claimHeap();
  const ops = decodeArtifact(sdk.readInputBytes());
  contextId();
  const fresh = read(META) === null;
  if (fresh) sdk.storageWrite(sdk.utf8(META), sdk.utf8(META_VALUE));
  let keys = fresh || read(STATE_KEY) === null ? new Array<string>(0) : keysOf();
  for (let i = 0; i < ops.length; i++) keys = mergeOp(keys, ops[i]);
  saveKeys(keys);
  for (let i = 0; i < ops.length; i++) savePath(ops[i].key);
  savePath(null);
  commitState();
}
