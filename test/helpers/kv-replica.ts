/**
 * The kv-store test app's delta artifact, read and written from TypeScript (the layout of
 * test/apps/lib/kvop.ts, docs/runtime.md "Replicating the kv-store"), and `KvReplica`: one node's
 * copy of a kv-store context in memory, running the real compiled wasm through the real runtime,
 * so tests can exchange artifacts between independent replicas in any order.
 *
 * @example
 *   const a = new KvReplica(rt, wasm, 0xa1);
 *   const b = new KvReplica(rt, wasm, 0xb1);
 *   const genesis = await a.call('init');
 *   await b.applyDelta(genesis.artifact);
 */
import type { CallResult, Runtime } from '../../src/runtime/call-types.ts';
import { bytes, newViews, request, type Views } from '../../src/runtime/test-support.ts';

/** the guest export the host calls with a remote delta's artifact as `input` */
export const SYNC_EXPORT = '__calimero_sync_next';
/** a remote delta touching a key with this prefix makes the kv app's `__calimero_sync_next` panic */
export const KV_TRAP_PREFIX = '__trap_on_sync';

const MAGIC = 0x31766b68; // "hkv1"
const RECORD_LEN = 81;

export interface KvOp {
  kind: 'put' | 'tombstone';
  time: bigint;
  /** 64 hex */
  executor: string;
  birthTime: bigint;
  birthExecutor: string;
  key: string;
  /** null for a tombstone */
  value: string | null;
}

/** The operations of a kv-store artifact; throws on a malformed one (the guest panics on those). */
export function decodeKvArtifact(artifact: Uint8Array): KvOp[] {
  if (artifact.length === 0) return [];
  const v = new DataView(artifact.buffer, artifact.byteOffset, artifact.byteLength);
  let at = 0;
  const take = (n: number) => {
    if (at + n > artifact.length) throw new Error(`kv artifact truncated at byte ${at}`);
    const start = at;
    at += n;
    return start;
  };
  if (v.getUint32(take(4), true) !== MAGIC) throw new Error('not a kv-store artifact');
  const count = v.getUint32(take(4), true);
  const hex = (start: number) => Buffer.from(artifact.subarray(start, start + 32)).toString('hex');
  const ops: KvOp[] = [];
  for (let i = 0; i < count; i++) {
    const r = take(RECORD_LEN);
    const kind = artifact[r] === 1 ? 'put' : artifact[r] === 2 ? 'tombstone' : null;
    if (!kind) throw new Error(`unknown operation kind ${artifact[r]}`);
    const keyLen = v.getUint32(take(4), true);
    const key = Buffer.from(artifact.subarray(take(keyLen), at)).toString('utf8');
    let value: string | null = null;
    if (kind === 'put') {
      const len = v.getUint32(take(4), true);
      value = Buffer.from(artifact.subarray(take(len), at)).toString('utf8');
    }
    ops.push({
      kind,
      time: v.getBigUint64(r + 1, true),
      executor: hex(r + 9),
      birthTime: v.getBigUint64(r + 41, true),
      birthExecutor: hex(r + 49),
      key,
      value,
    });
  }
  if (at !== artifact.length) throw new Error(`${artifact.length - at} trailing bytes`);
  return ops;
}

/** A kv-store artifact carrying `ops` (to craft concurrent or hostile deltas in tests). */
export function encodeKvArtifact(ops: KvOp[]): Uint8Array {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(8);
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(ops.length, 4);
  parts.push(head);
  const sized = (s: string) => {
    const b = Buffer.from(s, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length, 0);
    return [len, b];
  };
  for (const op of ops) {
    const r = Buffer.alloc(RECORD_LEN);
    r[0] = op.kind === 'put' ? 1 : 2;
    r.writeBigUInt64LE(op.time, 1);
    Buffer.from(op.executor, 'hex').copy(r, 9);
    r.writeBigUInt64LE(op.birthTime, 41);
    Buffer.from(op.birthExecutor, 'hex').copy(r, 49);
    parts.push(r, ...sized(op.key));
    if (op.kind === 'put') parts.push(...sized(op.value ?? ''));
  }
  return new Uint8Array(Buffer.concat(parts));
}

export interface Committed {
  output: unknown;
  /** the delta artifact `commit` handed the host */
  artifact: Uint8Array;
  root: string;
  events: Array<{ kind: string; data: string }>;
}

/** One node's replica of a kv-store context: its own replicated rows, executor and root. */
export class KvReplica {
  readonly views: Views = newViews();
  readonly executor: Uint8Array;
  root: string | null = null;

  constructor(
    private readonly rt: Runtime,
    private readonly wasm: Uint8Array,
    executorByte: number,
    private readonly appId = 'kv',
  ) {
    this.executor = bytes(32, executorByte);
  }

  /** runs a committing method and keeps its writes, as the contexts domain does on success */
  async call(method: string, args?: unknown): Promise<Committed> {
    const r = await this.rt.call(request(this.appId, this.wasm, method, args, this.views, { executorId: this.executor }));
    return this.keep(method, r);
  }

  /** a read-only method's JSON output, as the text the guest returned */
  async view(method: string, args?: unknown): Promise<string> {
    const r = await this.rt.call(request(this.appId, this.wasm, method, args, this.views, { executorId: this.executor, readOnly: true }));
    if (!r.ok) throw new Error(`${method}: ${r.kind}: ${r.message}`);
    return new TextDecoder().decode(r.output ?? new Uint8Array());
  }

  /** applies a remote delta through `__calimero_sync_next`; a failure keeps nothing and is answered */
  async applyDelta(artifact: Uint8Array, author: Uint8Array = bytes(32, 0xee)): Promise<CallResult> {
    const r = await this.rt.call(request(this.appId, this.wasm, SYNC_EXPORT, undefined, this.views, { input: artifact, executorId: author, deviceId: author }));
    if (r.ok) {
      if (!r.commit) throw new Error(`${SYNC_EXPORT} did not commit`);
      this.views.state.apply(r.writes);
      this.root = Buffer.from(r.commit.rootHash).toString('hex');
    }
    return r;
  }

  /** a joiner's snapshot: `from`'s replicated rows copied verbatim, and its root */
  copyFrom(from: KvReplica): void {
    this.views.state.entries.clear();
    for (const [k, v] of from.views.state.entries.values()) this.views.state.put(k, v);
    this.root = from.root;
  }

  /** the replicated rows as `key -> value` (UTF-8 keys, hex values), sorted by key */
  rows(): Record<string, string> {
    const out: Record<string, string> = {};
    const sorted = [...this.views.state.entries.values()].sort((a, b) => Buffer.compare(a[0], b[0]));
    for (const [k, v] of sorted) out[Buffer.from(k).toString('utf8')] = Buffer.from(v).toString('hex');
    return out;
  }

  private keep(method: string, r: CallResult): Committed {
    if (!r.ok) throw new Error(`${method}: ${r.kind}: ${r.message}`);
    if (!r.commit) throw new Error(`${method} did not commit`);
    this.views.state.apply(r.writes);
    this.root = Buffer.from(r.commit.rootHash).toString('hex');
    return {
      output: r.output ? JSON.parse(new TextDecoder().decode(r.output)) : undefined,
      artifact: r.commit.artifact,
      root: this.root,
      events: r.events.map((e) => ({ kind: e.kind, data: new TextDecoder().decode(e.data) })),
    };
  }
}
