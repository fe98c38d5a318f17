// A key-value store application shaped like the reference's kv-store (core `apps/kv-store`):
// init, set, get, entries, len, remove, clear, get_result (an application error), get_unchecked
// (a panic), events Inserted/Updated/Removed/Cleared with JSON data, and a commit of a root hash the
// app computes itself (a simple deterministic hash; the host treats it as opaque).
// AssemblyScript source; built by test/helpers/wasm-apps.ts with its ABI (kv.abi.json).
import * as sdk from './lib/sdk';
import { commitState, getItem, ITEM, keysOf, saveKeys, STATE_KEY } from './lib/kvstore';

function requireString(args: string, method: string, field: string): string {
  const v = sdk.jsonString(args, field);
  if (v === null) sdk.panic(method + ': failed to deserialize arguments: missing field `' + field + '`');
  return v!;
}

export function __calimero_register_merge(): void {}

export function init(): void {
  sdk.noArguments('init');
  if (sdk.storageRead(sdk.utf8(STATE_KEY)) !== null) sdk.panic('Cannot initialize over already existing state.');
  saveKeys([]);
  commitState([]);
}

export function set(): void {
  const args = sdk.readInput();
  const key = requireString(args, 'set', 'key');
  const value = requireString(args, 'set', 'value');
  const keys = keysOf();
  sdk.log('Setting key: ' + sdk.quote(key) + ' to value: ' + sdk.quote(value));
  const existed = getItem(key) !== null;
  sdk.storageWrite(sdk.utf8(ITEM + key), sdk.utf8(value));
  if (!existed) {
    keys.push(key);
    saveKeys(keys);
  }
  sdk.emit(existed ? 'Updated' : 'Inserted', '{"key":' + sdk.quote(key) + ',"value":' + sdk.quote(value) + '}');
  sdk.returnOk('null');
  commitState(keys);
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
  const old = getItem(key);
  if (old !== null) {
    sdk.storageRemove(sdk.utf8(ITEM + key));
    const rest: string[] = [];
    for (let i = 0; i < keys.length; i++) if (keys[i] != key) rest.push(keys[i]);
    saveKeys(rest);
    sdk.emit('Removed', '{"key":' + sdk.quote(key) + '}');
    sdk.returnOk(sdk.quote(old!));
    commitState(rest);
    return;
  }
  sdk.returnOk('null');
  commitState(keys);
}

export function clear(): void {
  sdk.noArguments('clear');
  const keys = keysOf();
  for (let i = 0; i < keys.length; i++) sdk.storageRemove(sdk.utf8(ITEM + keys[i]));
  saveKeys([]);
  if (keys.length > 0) sdk.emit('Cleared', '');
  commitState([]);
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
