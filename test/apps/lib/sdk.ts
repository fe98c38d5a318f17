// A tiny imitation of what the Rust SDK's generated wrappers do around the host functions
// (core `crates/sdk`): descriptors in guest memory, everything through register 0xFFFFFFFE,
// panics routed to `panic_utf8` with a Location, results through `value_return`.
// AssemblyScript source for the test applications (test/apps/*.ts).
import * as env from './env';

export const REG: u64 = 0xfffffffe;

/** a `Buffer` descriptor (ptr u64, len u64) for `data` */
export function buf(data: ArrayBuffer): u64 {
  const d = heap.alloc(16);
  store<u64>(d, <u64>changetype<usize>(data));
  store<u64>(d, <u64>data.byteLength, 8);
  return <u64>d;
}

export function utf8(s: string): ArrayBuffer {
  return String.UTF8.encode(s, false);
}

export function text(b: ArrayBuffer): string {
  return String.UTF8.decode(b, false);
}

/** a `Location` descriptor: file Buffer, line u32, column u32 */
export function location(file: string, line: u32, column: u32): u64 {
  const f = utf8(file);
  const d = heap.alloc(24);
  store<u64>(d, <u64>changetype<usize>(f));
  store<u64>(d, <u64>f.byteLength, 8);
  store<u32>(d, line, 16);
  store<u32>(d, column, 20);
  return <u64>d;
}

export function panic(message: string, file: string = 'app.ts', line: u32 = 1, column: u32 = 1): void {
  env.panic_utf8(buf(utf8(message)), location(file, line, column));
  unreachable();
}

/** routes AssemblyScript's `abort` (assertions, `throw`) to `panic_utf8`, as the Rust SDK's panic hook */
export function abortHook(message: string | null, fileName: string | null, line: u32, column: u32): void {
  panic(message !== null ? message! : 'explicit panic', fileName !== null ? fileName! : 'unknown', line, column);
}

export function readRegister(): ArrayBuffer {
  const len = env.register_len(REG);
  const out = new ArrayBuffer(<i32>len);
  if (env.read_register(REG, buf(out)) != 1) panic('Buffer is too small');
  return out;
}

export function readInputBytes(): ArrayBuffer {
  env.input(REG);
  return readRegister();
}

export function readInput(): string {
  return text(readInputBytes());
}

function valueReturn(tag: u64, data: ArrayBuffer): void {
  const d = heap.alloc(24);
  store<u64>(d, tag);
  store<u64>(d, <u64>changetype<usize>(data), 8);
  store<u64>(d, <u64>data.byteLength, 16);
  env.value_return(<u64>d);
}

export function returnOk(json: string): void {
  valueReturn(0, utf8(json));
}

export function returnErr(json: string): void {
  valueReturn(1, utf8(json));
}

export function log(s: string): void {
  env.log_utf8(buf(utf8(s)));
}

export function eventDesc(kind: ArrayBuffer, data: ArrayBuffer): u64 {
  const d = heap.alloc(32);
  store<u64>(d, <u64>changetype<usize>(kind));
  store<u64>(d, <u64>kind.byteLength, 8);
  store<u64>(d, <u64>changetype<usize>(data), 16);
  store<u64>(d, <u64>data.byteLength, 24);
  return <u64>d;
}

export function emit(kind: string, data: string): void {
  env.emit(eventDesc(utf8(kind), utf8(data)));
}

export function storageRead(key: ArrayBuffer): ArrayBuffer | null {
  if (env.storage_read(buf(key), REG) == 0) return null;
  return readRegister();
}

export function storageWrite(key: ArrayBuffer, value: ArrayBuffer): bool {
  return env.storage_write(buf(key), buf(value), REG) == 1;
}

export function storageRemove(key: ArrayBuffer): bool {
  return env.storage_remove(buf(key), REG) == 1;
}

export function commit(root: ArrayBuffer, artifact: ArrayBuffer): void {
  env.commit(buf(root), buf(artifact));
}

// --- minimal JSON for flat objects of strings and integers

/** the string field `name` of a flat JSON object, or null when absent */
export function jsonString(json: string, name: string): string | null {
  const at = fieldValueAt(json, name);
  if (at < 0 || json.charAt(at) != '"') return null;
  let out = '';
  let i = at + 1;
  while (i < json.length) {
    const c = json.charAt(i);
    if (c == '\\') {
      const n = json.charAt(i + 1);
      out += n == 'n' ? '\n' : n;
      i += 2;
      continue;
    }
    if (c == '"') return out;
    out += c;
    i++;
  }
  return null;
}

/** the integer field `name` of a flat JSON object, or `fallback` */
export function jsonInt(json: string, name: string, fallback: i64 = 0): i64 {
  const at = fieldValueAt(json, name);
  if (at < 0) return fallback;
  let end = at;
  while (end < json.length && '-0123456789'.includes(json.charAt(end))) end++;
  if (end == at) return fallback;
  return I64.parseInt(json.substring(at, end));
}

function fieldValueAt(json: string, name: string): i32 {
  const k = json.indexOf('"' + name + '"');
  if (k < 0) return -1;
  let i = k + name.length + 2;
  while (i < json.length && (json.charAt(i) == ' ' || json.charAt(i) == ':')) i++;
  return i;
}

export function quote(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charAt(i);
    if (c == '"' || c == '\\') out += '\\' + c;
    else if (c == '\n') out += '\\n';
    else out += c;
  }
  return out + '"';
}

const HEX = '0123456789abcdef';

export function toHex(b: ArrayBuffer): string {
  const u = Uint8Array.wrap(b);
  let out = '';
  for (let i = 0; i < u.length; i++) out += HEX.charAt(u[i] >> 4) + HEX.charAt(u[i] & 15);
  return out;
}

export function fromHex(s: string): ArrayBuffer {
  const out = new ArrayBuffer(s.length / 2);
  const u = Uint8Array.wrap(out);
  for (let i = 0; i < u.length; i++) {
    u[i] = <u8>((HEX.indexOf(s.charAt(2 * i)) << 4) | HEX.indexOf(s.charAt(2 * i + 1)));
  }
  return out;
}

/** an empty input, `null` or `{}` (what the Rust wrapper accepts for methods without arguments) */
export function noArguments(method: string): void {
  const s = readInput().trim();
  if (s.length > 0 && s != 'null' && s != '{}') {
    panic(method + ': takes no arguments, but the call sent unknown field(s)');
  }
}
