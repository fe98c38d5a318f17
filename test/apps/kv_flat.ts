// A key-value store whose every call touches a constant number of keys, whatever the store holds:
// the benchmark app of bench/rpc.ts (issue #14), so that a cost which grows with the number of
// keys is the host's, not the app's. Like the reference SDK, its ABI marks no method read-only
// (`get` and `len` never commit, as a Rust `&self` method). `set` commits a root chained from the
// previous one (FNV-1a over root ‖ key ‖ value, four lanes); `fill` inserts `count` keys in one
// call (the bench's setup). AssemblyScript source; built by test/helpers/wasm-apps.ts.
import * as sdk from './lib/sdk';

const COUNT = 'flat:count';
const ROOT = 'flat:root';
const ITEM = 'flat:item:';

function requireString(args: string, method: string, field: string): string {
  const v = sdk.jsonString(args, field);
  if (v === null) sdk.panic(method + ': failed to deserialize arguments: missing field `' + field + '`');
  return v!;
}

function count(): i64 {
  const raw = sdk.storageRead(sdk.utf8(COUNT));
  if (raw === null) sdk.panic('Failed to find or read app state');
  return I64.parseInt(sdk.text(raw!));
}

function chain(parts: string): ArrayBuffer {
  const prev = sdk.storageRead(sdk.utf8(ROOT));
  const root = new ArrayBuffer(32);
  const before = prev === null ? new Uint8Array(32) : Uint8Array.wrap(prev!);
  const data = Uint8Array.wrap(sdk.utf8(parts));
  for (let lane = 0; lane < 4; lane++) {
    let h: u64 = 0xcbf29ce484222325 ^ (<u64>lane * 0x9e3779b97f4a7c15);
    for (let j = 0; j < before.length; j++) h = (h ^ <u64>before[j]) * 0x100000001b3;
    for (let j = 0; j < data.length; j++) h = (h ^ <u64>data[j]) * 0x100000001b3;
    store<u64>(changetype<usize>(root) + lane * 8, h);
  }
  sdk.storageWrite(sdk.utf8(ROOT), root);
  return root;
}

export function init(): void {
  sdk.noArguments('init');
  if (sdk.storageRead(sdk.utf8(COUNT)) !== null) sdk.panic('Cannot initialize over already existing state.');
  sdk.storageWrite(sdk.utf8(COUNT), sdk.utf8('0'));
  sdk.commit(chain('init'), sdk.utf8('kv-flat:init'));
}

export function set(): void {
  const args = sdk.readInput();
  const key = requireString(args, 'set', 'key');
  const value = requireString(args, 'set', 'value');
  const n = count();
  const existed = sdk.storageWrite(sdk.utf8(ITEM + key), sdk.utf8(value));
  if (!existed) sdk.storageWrite(sdk.utf8(COUNT), sdk.utf8((n + 1).toString()));
  sdk.emit(existed ? 'Updated' : 'Inserted', '{"key":' + sdk.quote(key) + '}');
  sdk.returnOk('null');
  sdk.commit(chain(key + '=' + value), sdk.utf8('kv-flat:set:' + key));
}

export function get(): void {
  const key = requireString(sdk.readInput(), 'get', 'key');
  count();
  const v = sdk.storageRead(sdk.utf8(ITEM + key));
  sdk.returnOk(v === null ? 'null' : sdk.quote(sdk.text(v!)));
}

export function len(): void {
  sdk.noArguments('len');
  sdk.returnOk(count().toString());
}

/** inserts `<prefix><from + i>` = `v<from + i>` for i < count */
export function fill(): void {
  const args = sdk.readInput();
  const prefix = requireString(args, 'fill', 'prefix');
  const from = sdk.jsonInt(args, 'from');
  const total = sdk.jsonInt(args, 'count');
  let n = count();
  for (let i: i64 = 0; i < total; i++) {
    const k = prefix + (from + i).toString();
    if (!sdk.storageWrite(sdk.utf8(ITEM + k), sdk.utf8('v' + (from + i).toString()))) n++;
  }
  sdk.storageWrite(sdk.utf8(COUNT), sdk.utf8(n.toString()));
  sdk.returnOk(n.toString());
  sdk.commit(chain('fill:' + prefix + from.toString() + ':' + total.toString()), sdk.utf8('kv-flat:fill'));
}
