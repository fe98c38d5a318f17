/**
 * Persistence of the contexts domain (domain.md "storage layout"): one store space per kind of
 * record, keyed by context id first so a context's records are one prefix.
 *
 * - `ctx.meta`      context id → ContextMeta
 * - `ctx.members`   `<ctx>/<public key>` → ContextMember
 * - `ctx.state`     `<ctx>/<hex key>` → bytes: replicated application state (`storage_*`)
 * - `ctx.private`   `<ctx>/<hex key>` → bytes: node-local private state (`private_storage_*`)
 * - `ctx.index`     `<ctx>/<hex key>` → bytes: node-local ordered index (`storage_index_*`)
 * - `ctx.deltas`    `<ctx>/<delta id>` → DeltaRecord
 * - `ctx.keys`      public key → spare context identity secrets minted by `POST /identity/context`
 *
 * Lowercase hex preserves the byte order of keys, so ordered iteration over `ctx.index` is the
 * guest's byte order. The store only builds batch ops here; the executor commits them at once.
 *
 * Every call reads its context's meta and members: both are cached (store/cache.ts), invalidated
 * by the store's batches whoever writes them. `stateVersion` changes whenever a batch writes a
 * context's state, private state or index: the runtime's workers keep what a context's calls read
 * under that version (issue #14), and carry it to the next version but for the rows written in
 * between (`changedSince`, state-journal.ts; issue #33).
 */
import { toHex as hex } from '../crypto/ids.ts';
import type { IndexView, Writes } from '../runtime/index.ts';
import { KeyedCache } from '../store/cache.ts';
import { collect, type BatchOp, type Space, type Store } from '../store/store.ts';
import { StateJournal, type ChangedRow } from './state-journal.ts';
import type { ContextMember, ContextMeta, DeltaRecord } from './types.ts';

const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

export type StateSpaceName = 'state' | 'private' | 'index';

/** contexts whose meta and members are kept in memory at most */
const CONTEXTS_KEPT = 10_000;
/** the context a record of a `<ctx>/...` space belongs to */
const contextOf = (key: string) => key.slice(0, key.indexOf('/'));

export class ContextStore {
  readonly meta: Space<ContextMeta>;
  readonly members: Space<ContextMember>;
  readonly deltas: Space<DeltaRecord>;
  readonly keys: Space<{ privateKey: string; createdAt: number }>;
  private readonly kv: Record<StateSpaceName, Space<Uint8Array>>;
  private readonly metas: KeyedCache<ContextMeta | undefined>;
  private readonly memberLists: KeyedCache<ContextMember[]>;
  private readonly views = new Map<string, Readonly<Record<StateSpaceName, IndexView>>>();
  /** state versions, and which rows each move wrote (state-journal.ts) */
  private readonly journal = new StateJournal();

  constructor(readonly store: Store) {
    this.meta = store.space<ContextMeta>('ctx.meta');
    this.members = store.space<ContextMember>('ctx.members');
    this.deltas = store.space<DeltaRecord>('ctx.deltas');
    this.keys = store.space('ctx.keys');
    this.kv = {
      state: store.space<Uint8Array>('ctx.state', 'bytes'),
      private: store.space<Uint8Array>('ctx.private', 'bytes'),
      index: store.space<Uint8Array>('ctx.index', 'bytes'),
    };
    this.metas = new KeyedCache(store, {
      spaces: ['ctx.meta'],
      keyOf: (op) => op.key,
      max: CONTEXTS_KEPT,
      copy: (m) => m && { ...m, dagHeads: [...m.dagHeads] },
    });
    this.memberLists = new KeyedCache(store, {
      spaces: ['ctx.members'],
      keyOf: (op) => contextOf(op.key),
      max: CONTEXTS_KEPT,
      copy: (list) => list.map((m) => ({ ...m })),
    });
    store.observe((ops) => this.journal.record(ops));
  }

  getMeta(contextId: string): Promise<ContextMeta | undefined> {
    return this.metas.get(contextId, (id) => this.meta.get(id));
  }

  /** `getMeta` without waiting when the meta is kept in memory; undefined when it must be read. */
  metaNow(contextId: string): { value: ContextMeta | undefined } | undefined {
    return this.metas.peek(contextId);
  }

  /** `listMembers` without waiting when the list is kept in memory; undefined when it must be read. */
  membersNow(contextId: string): ContextMember[] | undefined {
    return this.memberLists.peek(contextId)?.value;
  }

  /**
   * A value that changes whenever a batch writes the context's state, private state or index (at
   * its start and at its end): equal values mean the state read under both is the same.
   */
  stateVersion(contextId: string): number {
    return this.journal.version(contextId);
  }

  /**
   * The rows of the context's state, private state and index written since `version` (an earlier
   * `stateVersion`), each once; undefined when no longer known (state-journal.ts).
   */
  changedSince(contextId: string, version: number): ChangedRow[] | undefined {
    return this.journal.changedSince(contextId, version);
  }

  async listMeta(): Promise<ContextMeta[]> {
    return (await collect(this.meta.entries())).map(([, m]) => m);
  }

  listMembers(contextId: string): Promise<ContextMember[]> {
    return this.memberLists.get(contextId, async (id) => (await collect(this.members.entries({ prefix: `${id}/` }))).map(([, m]) => m));
  }

  memberOp(contextId: string, member: ContextMember): BatchOp {
    return this.members.putOp(`${contextId}/${member.publicKey}`, member);
  }

  deltaOp(delta: DeltaRecord): BatchOp {
    return this.deltas.putOp(`${delta.contextId}/${delta.id}`, delta);
  }

  /** A read view of one keyspace of a context, as the runtime reads it. */
  /**
   * The context's views, made once and shared (they hold nothing but the context's key prefix):
   * a call asked for three fresh ones each time (issue #33).
   */
  viewsOf(contextId: string): Readonly<Record<StateSpaceName, IndexView>> {
    let views = this.views.get(contextId);
    if (views === undefined) {
      if (this.views.size >= CONTEXTS_KEPT) this.views.delete(this.views.keys().next().value!);
      views = { state: this.view('state', contextId), private: this.view('private', contextId), index: this.view('index', contextId) };
      this.views.set(contextId, views);
    }
    return views;
  }

  view(space: StateSpaceName, contextId: string): IndexView {
    const s = this.kv[space];
    const prefix = `${contextId}/`;
    return {
      get: async (key) => s.get(prefix + hex(key)),
      range: async (start, end, limit) => {
        const out: Array<[Uint8Array, Uint8Array]> = [];
        if (limit <= 0) return out;
        const startKey = hex(start);
        const endKey = end === undefined ? undefined : hex(end);
        if (endKey !== undefined && startKey >= endKey) return out;
        const first = await s.get(prefix + startKey);
        if (first !== undefined) out.push([start, first]);
        for await (const [k, v] of s.entries({ prefix, after: prefix + startKey })) {
          if (out.length >= limit) break;
          const key = k.slice(prefix.length);
          if (endKey !== undefined && key >= endKey) break;
          out.push([bytes(key), v]);
        }
        return out;
      },
    };
  }

  /** Batch ops that apply a call's writes to one keyspace (`null` = remove). */
  writeOps(space: StateSpaceName, contextId: string, writes: Writes): BatchOp[] {
    const s = this.kv[space];
    return writes.map(([k, v]) => (v === null ? s.delOp(`${contextId}/${hex(k)}`) : s.putOp(`${contextId}/${hex(k)}`, v)));
  }

  /**
   * A context's replicated state rows: hex key (without the context prefix) and value, in key order,
   * after the hex key `after` (exclusive) when given.
   */
  async *stateEntries(contextId: string, after?: string): AsyncIterable<[string, Uint8Array]> {
    const prefix = `${contextId}/`;
    const from = after === undefined ? {} : { after: prefix + after };
    for await (const [k, v] of this.kv.state.entries({ prefix, ...from })) yield [k.slice(prefix.length), v];
  }

  /** One replicated state row of a context by hex key. */
  stateValue(contextId: string, hexKey: string): Promise<Uint8Array | undefined> {
    return this.kv.state.get(`${contextId}/${hexKey}`);
  }

  /** Bytes of a kind of state held for a context (keys and values). */
  async stateSize(contextId: string, space: StateSpaceName = 'state'): Promise<bigint> {
    const prefix = `${contextId}/`;
    let n = 0n;
    for await (const [k, v] of this.kv[space].entries({ prefix })) n += BigInt((k.length - prefix.length) / 2 + v.length);
    return n;
  }

  /** Bytes of the delta records held for a context (their JSON form: an estimate of what they take). */
  async deltaSize(contextId: string): Promise<bigint> {
    let n = 0n;
    for await (const [, v] of this.deltas.entries({ prefix: `${contextId}/` })) n += BigInt(JSON.stringify(v).length);
    return n;
  }

  /** Batch ops that forget everything this node holds about a context. */
  async dropOps(contextId: string): Promise<BatchOp[]> {
    const prefix = `${contextId}/`;
    const ops: BatchOp[] = [this.meta.delOp(contextId)];
    for (const space of [this.members, this.deltas, this.kv.state, this.kv.private, this.kv.index] as Space<unknown>[]) {
      for await (const [k] of space.entries({ prefix })) ops.push(space.delOp(k));
    }
    return ops;
  }
}
