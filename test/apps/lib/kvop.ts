// The kv-store test app's replication unit (docs/runtime.md "Replicating the kv-store"): one
// last-writer-wins operation on one key, its 81-byte stamp record (the `kv:stamp:<key>` row) and
// the delta artifact `commit` hands the host. The order on operations is total, so every node
// keeps the same winner for a key whatever order the operations reach it in.
// AssemblyScript source, shared by test/apps/kv.ts and its upgraded versions.
import * as sdk from './sdk';

export const PUT: u8 = 1;
export const TOMBSTONE: u8 = 2;
export const ID_LEN: i32 = 32;
/** kind u8, time u64, executor [32], birth time u64, birth executor [32] */
export const RECORD_LEN: i32 = 81;
/** the artifact's first bytes, "hkv1" */
const MAGIC: u32 = 0x31766b68;

export class Op {
  constructor(
    public kind: u8,
    /** nanoseconds since the Unix epoch (the host's `time_now`), raised above every stamp seen */
    public time: u64,
    /** the writing account (`executor_id`): the first tiebreak */
    public executor: ArrayBuffer,
    /** the stamp of the write that made the key live: the key's place in `entries` */
    public birthTime: u64,
    public birthExecutor: ArrayBuffer,
    public key: string,
    /** the value's UTF-8 bytes for a PUT, null for a TOMBSTONE */
    public value: ArrayBuffer | null,
  ) {}
}

export const ZERO_ID = new ArrayBuffer(ID_LEN);

function compareBytes(a: ArrayBuffer, b: ArrayBuffer): i32 {
  const x = Uint8Array.wrap(a);
  const y = Uint8Array.wrap(b);
  const n = x.length < y.length ? x.length : y.length;
  for (let i = 0; i < n; i++) if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return x.length == y.length ? 0 : x.length < y.length ? -1 : 1;
}

function compareU64(a: u64, b: u64): i32 {
  return a == b ? 0 : a < b ? -1 : 1;
}

/**
 * The total order on two operations of the same key: time, executor, kind, value, birth. Only two
 * byte-identical operations compare equal, and applying one of them twice changes nothing.
 */
export function compareOps(a: Op, b: Op): i32 {
  let c = compareU64(a.time, b.time);
  if (c == 0) c = compareBytes(a.executor, b.executor);
  if (c == 0 && a.kind != b.kind) c = a.kind < b.kind ? -1 : 1;
  if (c == 0 && a.kind == PUT) c = compareBytes(a.value!, b.value!);
  if (c == 0) c = compareU64(a.birthTime, b.birthTime);
  if (c == 0) c = compareBytes(a.birthExecutor, b.birthExecutor);
  return c;
}

/** `entries` order: birth stamp, then key */
export function compareBirth(a: Op, b: Op): i32 {
  let c = compareU64(a.birthTime, b.birthTime);
  if (c == 0) c = compareBytes(a.birthExecutor, b.birthExecutor);
  if (c == 0) c = a.key == b.key ? 0 : a.key < b.key ? -1 : 1;
  return c;
}

export function encodeRecord(op: Op): ArrayBuffer {
  const out = new ArrayBuffer(RECORD_LEN);
  const p = changetype<usize>(out);
  store<u8>(p, op.kind);
  store<u64>(p + 1, op.time);
  memory.copy(p + 9, changetype<usize>(op.executor), ID_LEN);
  store<u64>(p + 41, op.birthTime);
  memory.copy(p + 49, changetype<usize>(op.birthExecutor), ID_LEN);
  return out;
}

/** Reads untrusted bytes: every read is bounds-checked, and a short or malformed input panics. */
class Reader {
  pos: i32 = 0;
  constructor(public buf: ArrayBuffer, public what: string) {}

  take(n: i64): usize {
    if (n < 0 || <i64>this.pos + n > <i64>this.buf.byteLength) {
      sdk.panic('sync: malformed ' + this.what + ': truncated at byte ' + this.pos.toString());
    }
    const p = changetype<usize>(this.buf) + <usize>this.pos;
    this.pos += <i32>n;
    return p;
  }

  u8(): u8 {
    return load<u8>(this.take(1));
  }

  u32(): u32 {
    return load<u32>(this.take(4));
  }

  u64(): u64 {
    return load<u64>(this.take(8));
  }

  bytes(n: i64): ArrayBuffer {
    return copyOut(this.take(n), <i32>n);
  }

  done(): bool {
    return this.pos == this.buf.byteLength;
  }
}

function copyOut(p: usize, n: i32): ArrayBuffer {
  const out = new ArrayBuffer(n);
  memory.copy(changetype<usize>(out), p, n);
  return out;
}

function readRecord(r: Reader, key: string): Op {
  const kind = r.u8();
  if (kind != PUT && kind != TOMBSTONE) sdk.panic('sync: malformed ' + r.what + ': unknown operation kind ' + kind.toString());
  const time = r.u64();
  const executor = r.bytes(ID_LEN);
  const birthTime = r.u64();
  const birthExecutor = r.bytes(ID_LEN);
  return new Op(kind, time, executor, birthTime, birthExecutor, key, null);
}

/** the stamp row of `key` (its value, for a PUT, lives in the item row) */
export function decodeRecord(raw: ArrayBuffer, key: string, value: ArrayBuffer | null): Op {
  const r = new Reader(raw, 'stamp row');
  const op = readRecord(r, key);
  if (!r.done()) sdk.panic('sync: malformed stamp row: ' + (raw.byteLength - RECORD_LEN).toString() + ' trailing bytes');
  op.value = op.kind == PUT ? (value === null ? new ArrayBuffer(0) : value) : null;
  return op;
}

/** "hkv1", u32 count, then per operation: record, u32 key length, key, and for a PUT u32 value length, value */
export function encodeArtifact(ops: Op[]): ArrayBuffer {
  let size = 8;
  const keys = new Array<ArrayBuffer>(ops.length);
  for (let i = 0; i < ops.length; i++) {
    keys[i] = sdk.utf8(ops[i].key);
    size += RECORD_LEN + 4 + keys[i].byteLength;
    if (ops[i].kind == PUT) size += 4 + ops[i].value!.byteLength;
  }
  const out = new ArrayBuffer(size);
  let p = changetype<usize>(out);
  store<u32>(p, MAGIC);
  store<u32>(p + 4, <u32>ops.length);
  p += 8;
  for (let i = 0; i < ops.length; i++) {
    memory.copy(p, changetype<usize>(encodeRecord(ops[i])), RECORD_LEN);
    p += RECORD_LEN;
    p = putBytes(p, keys[i]);
    if (ops[i].kind == PUT) p = putBytes(p, ops[i].value!);
  }
  return out;
}

function putBytes(p: usize, b: ArrayBuffer): usize {
  store<u32>(p, <u32>b.byteLength);
  memory.copy(p + 4, changetype<usize>(b), b.byteLength);
  return p + 4 + b.byteLength;
}

/** An empty artifact is a delta with no operations (the reference's no-op). */
export function decodeArtifact(raw: ArrayBuffer): Op[] {
  const ops: Op[] = [];
  if (raw.byteLength == 0) return ops;
  const r = new Reader(raw, 'artifact');
  if (r.u32() != MAGIC) sdk.panic('sync: malformed artifact: not a kv-store delta (expected "hkv1")');
  const count = r.u32();
  // every operation takes at least RECORD_LEN + 4 bytes: refuse a count the bytes cannot hold
  if (<i64>count * <i64>(RECORD_LEN + 4) > <i64>(raw.byteLength - 8)) sdk.panic('sync: malformed artifact: ' + count.toString() + ' operations cannot fit');
  for (let i: u32 = 0; i < count; i++) {
    const record = readRecord(r, '');
    const key = r.bytes(r.u32());
    record.key = sdk.text(key);
    if (record.key.includes('\n')) sdk.panic('sync: malformed artifact: a key holds a newline');
    if (record.kind == PUT) record.value = r.bytes(r.u32());
    ops.push(record);
  }
  if (!r.done()) sdk.panic('sync: malformed artifact: ' + (raw.byteLength - r.pos).toString() + ' trailing bytes');
  return ops;
}
