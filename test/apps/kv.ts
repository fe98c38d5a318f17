// A key-value store application shaped like the reference's kv-store (core `apps/kv-store`):
// init, set, get, entries, len, remove, clear, get_result (an application error), get_unchecked
// (a panic), events Inserted/Updated/Removed/Cleared with JSON data, and a commit of a root hash the
// app computes itself (a simple deterministic hash; the host treats it as opaque). Its deltas
// replicate like the reference SDK's: `commit` hands the host the call's last-writer-wins
// operations, and `__calimero_sync_next` merges a remote node's (docs/runtime.md "Replicating the
// kv-store").
// AssemblyScript source; built by test/helpers/wasm-apps.ts with its ABI (kv.abi.json).
import * as sdk from './lib/sdk';
import { decodeArtifact } from './lib/kvop';
import { commitState, getItem, hasState, keysOf, mergeOp, putLocal, removeLocal, saveKeys } from './lib/kvstore';

/** A remote delta touching a key with this prefix makes `__calimero_sync_next` panic (a test hook). */
const TRAP_PREFIX = '__trap_on_sync';

function requireString(args: string, method: string, field: string): string {
  const v = sdk.jsonString(args, field);
  if (v === null) sdk.panic(method + ': failed to deserialize arguments: missing field `' + field + '`');
  return v!;
}

export function __calimero_register_merge(): void {}

export function init(): void {
  sdk.noArguments('init');
  if (hasState()) sdk.panic('Cannot initialize over already existing state.');
  saveKeys([]);
  commitState();
}

export function set(): void {
  const args = sdk.readInput();
  const key = requireString(args, 'set', 'key');
  const value = requireString(args, 'set', 'value');
  const keys = keysOf();
  sdk.log('Setting key: ' + sdk.quote(key) + ' to value: ' + sdk.quote(value));
  const existed = putLocal(key, value);
  if (!existed) {
    keys.push(key);
    saveKeys(keys);
  }
  sdk.emit(existed ? 'Updated' : 'Inserted', '{"key":' + sdk.quote(key) + ',"value":' + sdk.quote(value) + '}');
  sdk.returnOk('null');
  commitState();
}

export function get(): void {
  const key = requireString(sdk.readInput(), 'get', 'key');
  keysOf();
  const v = getItem(key);
  sdk.returnOk(v === null ? 'null' : sdk.quote(v!));
}

export function entries(): void {
  sdk.noArguments('entries');
  const keys = keysOf();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out += ',';
    out += sdk.quote(keys[i]) + ':' + sdk.quote(getItem(keys[i])!);
  }
  sdk.returnOk(out + '}');
}

export function len(): void {
  sdk.noArguments('len');
  sdk.returnOk(keysOf().length.toString());
}

export function remove(): void {
  const key = requireString(sdk.readInput(), 'remove', 'key');
  const keys = keysOf();
  const old = removeLocal(key);
  if (old !== null) {
    const rest: string[] = [];
    for (let i = 0; i < keys.length; i++) if (keys[i] != key) rest.push(keys[i]);
    saveKeys(rest);
    sdk.emit('Removed', '{"key":' + sdk.quote(key) + '}');
    sdk.returnOk(sdk.quote(old!));
    commitState();
    return;
  }
  sdk.returnOk('null');
  commitState();
}

export function clear(): void {
  sdk.noArguments('clear');
  const keys = keysOf();
  for (let i = 0; i < keys.length; i++) removeLocal(keys[i]);
  saveKeys([]);
  if (keys.length > 0) sdk.emit('Cleared', '');
  commitState();
}

export function get_result(): void {
  const key = requireString(sdk.readInput(), 'get_result', 'key');
  keysOf();
  const v = getItem(key);
  if (v === null) sdk.returnErr('{"data":' + sdk.quote(key) + ',"kind":"NotFound"}');
  else sdk.returnOk(sdk.quote(v!));
}

export function get_unchecked(): void {
  const key = requireString(sdk.readInput(), 'get_unchecked', 'key');
  keysOf();
  const v = getItem(key);
  if (v === null) sdk.panic('key not found', 'apps/kv/src/lib.rs', 133, 33);
  sdk.returnOk(sdk.quote(v!));
}

/**
 * Applies a remote delta: `input` is the artifact the authoring node's call committed. A context
 * without state (a joiner applying the genesis delta first) starts from the empty state. The
 * merged operations go out as this call's artifact, which the host does not rebroadcast.
 */
export function __calimero_sync_next(): void {
  const ops = decodeArtifact(sdk.readInputBytes());
  for (let i = 0; i < ops.length; i++) {
    if (ops[i].key.startsWith(TRAP_PREFIX)) sdk.panic('sync refused: the key "' + ops[i].key + '" is reserved to make the merge trap (test hook)');
  }
  let keys = hasState() ? keysOf() : [];
  for (let i = 0; i < ops.length; i++) keys = mergeOp(keys, ops[i]);
  saveKeys(keys);
  commitState();
}
