// The kv-store test app's state (shared by test/apps/kv.ts and its upgraded versions), every row in
// replicated storage so a snapshot copy carries the merge metadata (docs/runtime.md "Replicating
// the kv-store"):
//   kv:state         the live keys, newline-separated, in `entries` order (birth stamp, then key)
//   kv:item:<key>    a live key's value
//   kv:stamp:<key>   the key's winning operation (kvop.ts record), kept for removed keys as a tombstone
//   kv:clock         the highest operation time seen (u64 LE), so a local write stamps above it
//   kv:sum           per lane (4 x u64 LE), the wrapping sum of the live entries' hashes: the root's
//                    input (no row while all four are zero)
// Local writes stamp their operations and collect them; `commitState` commits the root (a
// deterministic hash of the live entries: the host treats it as opaque) with those operations as
// the artifact. `mergeOp` applies a remote operation: the greater one wins.
import * as env from './env';
import * as sdk from './sdk';
import { compareBirth, compareOps, decodeRecord, encodeArtifact, encodeRecord, ID_LEN, Op, PUT, TOMBSTONE, ZERO_ID } from './kvop';

export const STATE_KEY = 'kv:state';
export const ITEM = 'kv:item:';
export const STAMP = 'kv:stamp:';
export const CLOCK = 'kv:clock';
export const SUM = 'kv:sum';

/** the operations this call wrote or merged: the artifact `commitState` hands the host */
const changed: Op[] = [];
let callTime: u64 = 0;
let callExecutor: ArrayBuffer | null = null;

export function keysOf(): string[] {
  const raw = sdk.storageRead(sdk.utf8(STATE_KEY));
  if (raw === null) sdk.panic('Failed to find or read app state', 'apps/kv/src/lib.rs', 123, 16);
  const s = sdk.text(raw!);
  return s.length == 0 ? [] : s.split('\n');
}

export function hasState(): bool {
  return sdk.storageRead(sdk.utf8(STATE_KEY)) !== null;
}

export function saveKeys(keys: string[]): void {
  sdk.storageWrite(sdk.utf8(STATE_KEY), sdk.utf8(keys.join('\n')));
}

export function getItem(key: string): string | null {
  const v = sdk.storageRead(sdk.utf8(ITEM + key));
  return v === null ? null : sdk.text(v!);
}

function readClock(): u64 {
  const raw = sdk.storageRead(sdk.utf8(CLOCK));
  return raw === null || raw!.byteLength != 8 ? 0 : load<u64>(changetype<usize>(raw!));
}

/** the key's winning operation; a value without a stamp row (state written before stamps) counts as stamp zero */
export function storedOp(key: string): Op | null {
  const value = sdk.storageRead(sdk.utf8(ITEM + key));
  const record = sdk.storageRead(sdk.utf8(STAMP + key));
  if (record !== null) return decodeRecord(record!, key, value);
  return value === null ? null : new Op(PUT, 0, ZERO_ID, 0, ZERO_ID, key, value);
}

function writeOp(op: Op): void {
  sdk.storageWrite(sdk.utf8(STAMP + op.key), encodeRecord(op));
  const old = sdk.storageRead(sdk.utf8(ITEM + op.key));
  if (old !== null) account(op.key, old!, -1);
  if (op.kind == PUT) {
    sdk.storageWrite(sdk.utf8(ITEM + op.key), op.value!);
    account(op.key, op.value!, 1);
  } else sdk.storageRemove(sdk.utf8(ITEM + op.key));
  const clock = readClock();
  const next = op.time > clock ? op.time : clock;
  const bytes = new ArrayBuffer(8);
  store<u64>(changetype<usize>(bytes), next);
  sdk.storageWrite(sdk.utf8(CLOCK), bytes);
  changed.push(op);
}

/** One stamp per call: above the wall clock and above every operation this state has seen. */
function localStamp(): u64 {
  if (callTime == 0) {
    const b = new ArrayBuffer(8);
    env.time_now(sdk.buf(b));
    const now = load<u64>(changetype<usize>(b));
    const clock = readClock();
    callTime = now > clock ? now : clock + 1;
  }
  return callTime;
}

function localExecutor(): ArrayBuffer {
  if (callExecutor === null) {
    env.executor_id(sdk.REG);
    const id = sdk.readRegister();
    if (id.byteLength != ID_LEN) sdk.panic('executor_id is not 32 bytes');
    callExecutor = id;
  }
  return callExecutor!;
}

/**
 * A migration's stamp is a function of the state alone (the clock plus one, executor zero), so
 * every node that migrates the same state writes the same rows.
 */
export function useStateStamp(): void {
  callTime = readClock() + 1;
  callExecutor = ZERO_ID;
}

/** Writes `value` under `key` with this call's stamp; answers whether the key was live before. */
export function putLocal(key: string, value: string): bool {
  if (key.includes('\n')) sdk.panic('a key cannot hold a newline (the key list is newline-separated)');
  const stored = storedOp(key);
  const existed = stored !== null && stored.kind == PUT;
  const time = localStamp();
  const executor = localExecutor();
  // an update keeps the key's place in `entries`; an insert is born now
  const birthTime = existed ? stored!.birthTime : time;
  const birthExecutor = existed ? stored!.birthExecutor : executor;
  writeOp(new Op(PUT, time, executor, birthTime, birthExecutor, key, sdk.utf8(value)));
  return existed;
}

/** Removes a live `key` as a tombstone with this call's stamp; answers its old value (null: nothing to remove). */
export function removeLocal(key: string): string | null {
  const old = getItem(key);
  if (old === null) return null;
  writeOp(new Op(TOMBSTONE, localStamp(), localExecutor(), 0, ZERO_ID, key, null));
  return old;
}

/**
 * Applies a remote operation to `keys` (the live list, in `entries` order) when it beats the
 * key's stored one; a duplicate or an older operation changes nothing.
 */
export function mergeOp(keys: string[], op: Op): string[] {
  const stored = storedOp(op.key);
  if (stored !== null && compareOps(op, stored!) <= 0) return keys;
  writeOp(op);
  const rest: string[] = [];
  for (let i = 0; i < keys.length; i++) if (keys[i] != op.key) rest.push(keys[i]);
  if (op.kind != PUT) return rest;
  // place the key by its birth stamp; new keys are usually the latest, so scan from the end
  let at = rest.length;
  while (at > 0 && compareBirth(op, storedOp(rest[at - 1])!) < 0) at--;
  const out: string[] = [];
  for (let i = 0; i < at; i++) out.push(rest[i]);
  out.push(op.key);
  for (let i = at; i < rest.length; i++) out.push(rest[i]);
  return out;
}

const FNV_PRIME: u64 = 0x100000001b3;

function laneBasis(lane: i32): u64 {
  return 0xcbf29ce484222325 ^ (<u64>lane * 0x9e3779b97f4a7c15);
}

function fnv(h: u64, bytes: ArrayBuffer): u64 {
  const u = Uint8Array.wrap(bytes);
  for (let j = 0; j < u.length; j++) h = (h ^ <u64>u[j]) * FNV_PRIME;
  return h;
}

/** Adds (`sign` 1) or takes away (`sign` -1) one live entry's lane hashes in `kv:sum`. */
function account(key: string, value: ArrayBuffer, sign: i32): void {
  const sums = readSums();
  const entry = sdk.utf8(key + '=' + sdk.text(value) + ';');
  const p = changetype<usize>(sums);
  for (let lane = 0; lane < 4; lane++) {
    const h = fnv(laneBasis(lane), entry);
    const at = p + <usize>lane * 8;
    store<u64>(at, sign > 0 ? load<u64>(at) + h : load<u64>(at) - h);
  }
  // all-zero sums (no live entry) are no row, so the row set stays a function of the live entries
  const empty = load<u64>(p) == 0 && load<u64>(p + 8) == 0 && load<u64>(p + 16) == 0 && load<u64>(p + 24) == 0;
  if (empty) sdk.storageRemove(sdk.utf8(SUM));
  else sdk.storageWrite(sdk.utf8(SUM), sums);
}

function readSums(): ArrayBuffer {
  const raw = sdk.storageRead(sdk.utf8(SUM));
  return raw === null || raw!.byteLength != 32 ? new ArrayBuffer(32) : raw!;
}

/**
 * The root: per lane, FNV-1a over that lane's wrapping sum of the live entries' hashes. A sum does
 * not depend on the order entries came in, and one write updates it in constant time.
 */
function root(): ArrayBuffer {
  const sums = readSums();
  const out = new ArrayBuffer(32);
  for (let lane = 0; lane < 4; lane++) {
    store<u64>(changetype<usize>(out) + lane * 8, fnv(laneBasis(lane), sums.slice(lane * 8, lane * 8 + 8)));
  }
  return out;
}

/** Commits the root of the live entries, with this call's operations as the delta artifact. */
export function commitState(): void {
  sdk.commit(root(), encodeArtifact(changed));
}
