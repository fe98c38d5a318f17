// Exercises every host function this runtime provides, one method per behaviour, for the runtime's
// unit tests (src/runtime/*.test.ts). Methods take a flat JSON object and answer JSON.
// AssemblyScript source; built by test/helpers/wasm-apps.ts.
import * as env from './lib/env';
import * as sdk from './lib/sdk';

let mergeRegistered = false;

export function __calimero_register_merge(): void {
  mergeRegistered = true;
}

function args(): string {
  return sdk.readInput();
}

function str(name: string): string {
  const v = sdk.jsonString(args(), name);
  return v === null ? '' : v!;
}

function num(name: string, fallback: i64 = 0): i64 {
  return sdk.jsonInt(args(), name, fallback);
}

function bytesOf(n: i32, fill: u8): ArrayBuffer {
  const b = new ArrayBuffer(n);
  memory.fill(changetype<usize>(b), fill, n);
  return b;
}

function regOrEmpty(found: u32): string {
  return found == 1 ? sdk.quote(sdk.text(sdk.readRegister())) : 'null';
}

function idOf(f: (reg: u64) => void): string {
  f(sdk.REG);
  return sdk.quote(sdk.toHex(sdk.readRegister()));
}

export function merge_registered(): void {
  sdk.returnOk(mergeRegistered ? 'true' : 'false');
}

export function echo(): void {
  sdk.returnOk(sdk.quote(args()));
}

export function nothing(): void {}

export function identity(): void {
  let origin = 'null';
  if (env.xcall_origin(sdk.REG) == 1) origin = sdk.quote(sdk.toHex(sdk.readRegister()));
  sdk.returnOk(
    '{"context":' + idOf(env.context_id) + ',"executor":' + idOf(env.executor_id) + ',"account":' + idOf(env.account_id) +
      ',"device":' + idOf(env.device_id) + ',"origin":' + origin + '}',
  );
}

export function registers(): void {
  const unset = env.register_len(12345);
  env.input(sdk.REG);
  const len = env.register_len(sdk.REG);
  const wrong = new ArrayBuffer(<i32>len + 1);
  const short = env.read_register(sdk.REG, sdk.buf(wrong));
  sdk.returnOk('{"unset":"' + unset.toString() + '","len":' + len.toString() + ',"wrongSize":' + short.toString() + '}');
}

export function many_registers(): void {
  const n = <i32>num('n');
  for (let i = 0; i < n; i++) env.context_id(<u64>i);
}

export function read_unset_register(): void {
  env.read_register(777, sdk.buf(new ArrayBuffer(1)));
}

export function logs(): void {
  const n = <i32>num('n');
  for (let i = 0; i < n; i++) sdk.log('line ' + i.toString());
}

export function long_log(): void {
  env.log_utf8(sdk.buf(bytesOf(<i32>num('size'), 0x61)));
}

export function bad_utf8_log(): void {
  env.log_utf8(sdk.buf(bytesOf(3, 0xff)));
}

export function events(): void {
  const n = <i32>num('n');
  for (let i = 0; i < n; i++) sdk.emit('Tick', '{"i":' + i.toString() + '}');
}

export function big_event(): void {
  const kind = <i32>num('kind', 4);
  const data = <i32>num('data', 0);
  env.emit(sdk.eventDesc(bytesOf(kind, 0x4b), bytesOf(data, 0x30)));
}

export function emit_handler(): void {
  env.emit_with_handler(sdk.eventDesc(sdk.utf8('Ping'), sdk.utf8('{}')), sdk.buf(sdk.utf8(str('handler'))));
}

export function write(): void {
  const existed = sdk.storageWrite(sdk.utf8(str('key')), sdk.utf8(str('value')));
  sdk.returnOk(existed ? sdk.quote(sdk.text(sdk.readRegister())) : 'null');
}

export function write_sized(): void {
  const size = <i32>num('size');
  env.storage_write(sdk.buf(sdk.utf8(str('key'))), sdk.buf(bytesOf(size, 0x76)), sdk.REG);
}

export function write_big_key(): void {
  env.storage_write(sdk.buf(bytesOf(<i32>num('size'), 0x6b)), sdk.buf(sdk.utf8('v')), sdk.REG);
}

export function read(): void {
  const v = sdk.storageRead(sdk.utf8(str('key')));
  sdk.returnOk(v === null ? 'null' : sdk.quote(sdk.text(v!)));
}

export function remove(): void {
  sdk.returnOk(regOrEmpty(env.storage_remove(sdk.buf(sdk.utf8(str('key'))), sdk.REG)));
}

export function read_your_writes(): void {
  sdk.storageWrite(sdk.utf8('ryw'), sdk.utf8('first'));
  sdk.storageWrite(sdk.utf8('ryw'), sdk.utf8('second'));
  const v = sdk.storageRead(sdk.utf8('ryw'));
  sdk.storageRemove(sdk.utf8('gone'));
  const gone = sdk.storageRead(sdk.utf8('gone'));
  sdk.returnOk('{"ryw":' + sdk.quote(sdk.text(v!)) + ',"gone":' + (gone === null ? 'null' : '"still"') + '}');
}

export function many_writes(): void {
  const n = <i32>num('n');
  for (let i = 0; i < n; i++) sdk.storageWrite(sdk.utf8('w' + i.toString()), sdk.utf8('x'));
}

export function write_then_trap(): void {
  sdk.storageWrite(sdk.utf8('doomed'), sdk.utf8('1'));
  sdk.emit('Doomed', '');
  unreachable();
}

export function write_then_app_error(): void {
  sdk.storageWrite(sdk.utf8('doomed'), sdk.utf8('1'));
  sdk.emit('Doomed', '');
  sdk.commit(bytesOf(32, 7), sdk.utf8('artifact'));
  sdk.returnErr('{"kind":"Nope","data":"no"}');
}

export function write_then_panic(): void {
  sdk.storageWrite(sdk.utf8('doomed'), sdk.utf8('1'));
  sdk.panic('it broke', 'src/lib.rs', 42, 7);
}

export function panic_plain(): void {
  env.panic(sdk.location('src/plain.rs', 9, 3));
}

export function assert_fails(): void {
  assert(num('x') == 1, 'x must be 1');
}

export function divide(): void {
  const d = <i32>num('d');
  sdk.returnOk((10 / d).toString());
}

function recurse(n: i32): i32 {
  return n == 0 ? 0 : recurse(n + 1) + 1;
}

export function deep(): void {
  sdk.returnOk(recurse(1).toString());
}

export function time(): void {
  const b = new ArrayBuffer(8);
  env.time_now(sdk.buf(b));
  sdk.returnOk('"' + load<u64>(changetype<usize>(b)).toString() + '"');
}

export function time_bad(): void {
  env.time_now(sdk.buf(new ArrayBuffer(4)));
}

export function random(): void {
  const b = new ArrayBuffer(<i32>num('n'));
  env.random_bytes(sdk.buf(b));
  sdk.returnOk(sdk.quote(sdk.toHex(b)));
}

export function verify(): void {
  const r = env.ed25519_verify(sdk.buf(sdk.fromHex(str('sig'))), sdk.buf(sdk.fromHex(str('pk'))), sdk.buf(sdk.utf8(str('msg'))));
  sdk.returnOk(r.toString());
}

export function private_ops(): void {
  const k = sdk.buf(sdk.utf8('secret'));
  const w = env.private_storage_write(k, sdk.buf(sdk.utf8(str('value'))));
  const r = regOrEmpty(env.private_storage_read(k, sdk.REG));
  const rm = str('remove') == 'yes' ? regOrEmpty(env.private_storage_remove(k, sdk.REG)) : 'null';
  const after = regOrEmpty(env.private_storage_read(k, sdk.REG));
  sdk.returnOk('{"write":' + w.toString() + ',"read":' + r + ',"removed":' + rm + ',"after":' + after + '}');
}

export function private_read(): void {
  sdk.returnOk(regOrEmpty(env.private_storage_read(sdk.buf(sdk.utf8(str('key'))), sdk.REG)));
}

/** the register's scan encoding (count u32, then klen u32, key, vlen u32, value) as JSON pairs */
function decodePairs(): string {
  const b = sdk.readRegister();
  const p = changetype<usize>(b);
  const count = load<u32>(p);
  let at: usize = 4;
  let out = '[';
  for (let i: u32 = 0; i < count; i++) {
    const kl = load<u32>(p + at);
    const k = String.UTF8.decodeUnsafe(p + at + 4, kl);
    at += 4 + kl;
    const vl = load<u32>(p + at);
    const v = String.UTF8.decodeUnsafe(p + at + 4, vl);
    at += 4 + vl;
    if (i > 0) out += ',';
    out += '[' + sdk.quote(k) + ',' + sdk.quote(v) + ']';
  }
  return out + ']';
}

export function index_set(): void {
  const keys = str('keys').split(',');
  let r: u32 = 1;
  for (let i = 0; i < keys.length; i++) r &= env.storage_index_set(sdk.buf(sdk.utf8(keys[i])), sdk.buf(sdk.utf8('v-' + keys[i])));
  sdk.returnOk(r.toString());
}

export function index_scan(): void {
  const hi = str('hi');
  env.storage_index_scan(sdk.buf(sdk.utf8(str('lo'))), sdk.buf(sdk.utf8(hi)), <u64>num('offset'), <u64>num('limit'), sdk.REG);
  sdk.returnOk(decodePairs());
}

export function index_last(): void {
  env.storage_index_last(sdk.buf(sdk.utf8(str('lo'))), sdk.buf(sdk.utf8(str('hi'))), sdk.REG);
  sdk.returnOk(decodePairs());
}

export function index_edit(): void {
  // set, remove one key, remove a prefix, then scan everything: read-your-writes over the index
  env.storage_index_set(sdk.buf(sdk.utf8('b/2')), sdk.buf(sdk.utf8('new')));
  env.storage_index_remove(sdk.buf(sdk.utf8(str('remove'))));
  env.storage_index_remove_prefix(sdk.buf(sdk.utf8(str('prefix'))));
  env.storage_index_scan(sdk.buf(sdk.utf8('')), sdk.buf(sdk.utf8('')), 0, 0, sdk.REG);
  sdk.returnOk(decodePairs());
}

export function index_meta(): void {
  const k = sdk.buf(sdk.utf8('coll'));
  const set = env.storage_index_meta_set(k, sdk.buf(sdk.utf8('valid')));
  const got = regOrEmpty(env.storage_index_meta_get(k, sdk.REG));
  const cleared = env.storage_index_meta_clear(k);
  const after = regOrEmpty(env.storage_index_meta_get(k, sdk.REG));
  sdk.returnOk('{"set":' + set.toString() + ',"got":' + got + ',"cleared":' + cleared.toString() + ',"after":' + after + '}');
}

export function search(): void {
  env.search_query(sdk.buf(sdk.utf8('q')), sdk.REG);
}

export function tee(): void {
  sdk.returnOk(env.tee_origin().toString());
}

export function tee_random(): void {
  env.tee_random_bytes(sdk.buf(new ArrayBuffer(8)));
}

export function tee_keys(): void {
  env.tee_authority_keys(sdk.REG);
}

// seal_to: {key: hex, text} -> {sealed: 0|1, envelope: hex | null}
export function seal(): void {
  const r = env.seal_to(sdk.buf(sdk.fromHex(str('key'))), sdk.buf(sdk.utf8(str('text'))), sdk.REG);
  sdk.returnOk('{"sealed":' + r.toString() + ',"envelope":' + (r == 1 ? sdk.quote(sdk.toHex(sdk.readRegister())) : 'null') + '}');
}

// open_sealed: {envelope: hex} -> {opened: 0|1, text: string | null}
export function open(): void {
  const r = env.open_sealed(sdk.buf(sdk.fromHex(str('envelope'))), sdk.REG);
  sdk.returnOk('{"opened":' + r.toString() + ',"text":' + regOrEmpty(r) + '}');
}

// seal_to then open_sealed in one call, as an app keeping a secret in its own state would
export function seal_open(): void {
  if (env.seal_to(sdk.buf(sdk.fromHex(str('key'))), sdk.buf(sdk.utf8(str('text'))), sdk.REG) != 1) sdk.panic('seal_to refused');
  const envelope = sdk.readRegister();
  const r = env.open_sealed(sdk.buf(envelope), sdk.REG);
  sdk.returnOk('{"opened":' + r.toString() + ',"text":' + regOrEmpty(r) + '}');
}

export function blob_read(): void {
  const fd = env.blob_open(sdk.buf(sdk.fromHex(str('id'))));
  const chunk = <i32>num('chunk', 7);
  let out = '';
  let reads = 0;
  for (;;) {
    const b = new ArrayBuffer(chunk);
    const n = env.blob_read(fd, sdk.buf(b));
    if (n == 0) break;
    reads++;
    out += String.UTF8.decodeUnsafe(changetype<usize>(b), <usize>n);
  }
  const id = new ArrayBuffer(32);
  env.blob_close(fd, sdk.buf(id));
  sdk.returnOk('{"text":' + sdk.quote(out) + ',"reads":' + reads.toString() + ',"id":' + sdk.quote(sdk.toHex(id)) + '}');
}

export function blob_write(): void {
  const fd = env.blob_create();
  const parts = str('data').split('|');
  let written: u64 = 0;
  for (let i = 0; i < parts.length; i++) written += env.blob_write(fd, sdk.buf(sdk.utf8(parts[i])));
  const id = new ArrayBuffer(32);
  env.blob_close(fd, sdk.buf(id));
  sdk.returnOk('{"id":' + sdk.quote(sdk.toHex(id)) + ',"written":' + written.toString() + '}');
}

export function blob_bad_fd(): void {
  env.blob_read(99, sdk.buf(new ArrayBuffer(4)));
}

export function blob_announce(): void {
  const r = env.blob_announce_to_context(sdk.buf(sdk.fromHex(str('id'))), sdk.buf(sdk.fromHex(str('ctx'))));
  sdk.returnOk(r.toString());
}

export function blob_in_context(): void {
  const fd = env.blob_open_in_context(sdk.buf(sdk.fromHex(str('id'))), sdk.buf(sdk.fromHex(str('ctx'))));
  sdk.returnOk(fd.toString());
}

export function http(): void {
  const e = sdk.buf(sdk.utf8(''));
  const status = env.fetch(sdk.buf(sdk.utf8('https://example.com')), sdk.buf(sdk.utf8('GET')), e, e, sdk.REG);
  sdk.returnOk('{"status":' + status.toString() + ',"body":' + sdk.quote(sdk.text(sdk.readRegister())) + '}');
}

function xcallDesc(ctx: ArrayBuffer, fn: ArrayBuffer, params: ArrayBuffer): u64 {
  const d = heap.alloc(48);
  store<u64>(d, <u64>changetype<usize>(ctx));
  store<u64>(d, <u64>ctx.byteLength, 8);
  store<u64>(d, <u64>changetype<usize>(fn), 16);
  store<u64>(d, <u64>fn.byteLength, 24);
  store<u64>(d, <u64>changetype<usize>(params), 32);
  store<u64>(d, <u64>params.byteLength, 40);
  return <u64>d;
}

export function xcalls(): void {
  const n = <i32>num('n', 1);
  const ctx = sdk.fromHex(str('ctx'));
  for (let i = 0; i < n; i++) env.xcall(xcallDesc(ctx, sdk.utf8(str('fn')), sdk.utf8('{"i":' + i.toString() + '}')));
}

export function xcall_big(): void {
  env.xcall(xcallDesc(sdk.fromHex(str('ctx')), bytesOf(<i32>num('fn', 1), 0x66), bytesOf(<i32>num('params', 0), 0x70)));
}

export function commit_once(): void {
  sdk.storageWrite(sdk.utf8('c'), sdk.utf8('1'));
  sdk.commit(bytesOf(32, 0xab), sdk.utf8('delta'));
}

export function commit_twice(): void {
  sdk.commit(bytesOf(32, 1), sdk.utf8('a'));
  sdk.commit(bytesOf(32, 2), sdk.utf8('b'));
}

export function commit_bad_root(): void {
  sdk.commit(bytesOf(31, 1), sdk.utf8('a'));
}

export function bad_return_tag(): void {
  const d = heap.alloc(24);
  store<u64>(d, 2);
  store<u64>(d, 0, 8);
  store<u64>(d, 0, 16);
  env.value_return(<u64>d);
}

export function big_return(): void {
  const size = <i32>num('size');
  const b = bytesOf(size, 0x22);
  const d = heap.alloc(24);
  store<u64>(d, 0);
  store<u64>(d, <u64>changetype<usize>(b), 8);
  store<u64>(d, <u64>size, 16);
  env.value_return(<u64>d);
}

export function migration_witness(): void {
  env.emit_migration_witness(sdk.buf(sdk.utf8('witness')));
}

/** grows memory by `pages`, then hands the host a value that lives in the new pages */
export function grow_and_write(): void {
  const pages = <i32>num('pages');
  const before = memory.size();
  const grown = memory.grow(pages);
  if (grown < 0) sdk.panic('grow refused');
  const at = <usize>(memory.size() - 1) * 65536;
  memory.fill(at, 0x7a, 16);
  const d = heap.alloc(16);
  store<u64>(d, <u64>at);
  store<u64>(d, 16, 8);
  env.storage_write(sdk.buf(sdk.utf8('grown')), <u64>d, sdk.REG);
  sdk.returnOk('{"before":' + before.toString() + ',"after":' + memory.size().toString() + '}');
}

export function bad_pointer(): void {
  const d = heap.alloc(16);
  store<u64>(d, 0xfffffff0);
  store<u64>(d, 64, 8);
  env.log_utf8(<u64>d);
}

export function with_args(x: i32): i32 {
  return x;
}
