/**
 * Applying remote deltas in causal order (issue #13 item 3; domain.md §2.4, §2.6; runtime.md §5).
 * A delta whose parents this node holds is applied through the application's own merge entry,
 * `__calimero_sync_next`, with the delta's artifact as input, under the context's write lock; its
 * state writes, the delta record, the new root and the new DAG heads go in one batch; then the
 * delta's recorded events are published as a `StateMutation`, as for a local call. A delta whose
 * parents are missing waits here (bounded) and is applied as soon as they land, children after
 * parents, at most APPLY_BATCH per hold of the write lock so that reads and local writes interleave
 * with a long catch-up. Duplicates are ignored. A delta the application fails to apply is quarantined with its
 * reason: nothing of it is stored, the context keeps serving reads and local writes. A failure of
 * this node's making (deadline, overload, a worker replaced) is retried with back-off first, within
 * bounds (retries.ts).
 *
 * Heads: applying delta D removes D's parents from the heads and adds D, so concurrent deltas leave
 * several heads, which the next local write (parented on all of them) merges.
 *
 * Upgrades: while the context's group targets a version this node's copy has not migrated to
 * (`deferral` says why), remote deltas are deferred — neither applied nor kept — because they may
 * come from the new version's code and this node would merge them with the old one's. Peers' heads
 * keep advertising them, so they are pulled again, and merged by the new code, once the context
 * migrated (docs/governance.md "Upgrades and migrations").
 */
import type { Logger } from 'pino';
import type { EventBus } from '../bus.ts';
import { OpDag } from '../governance/index.ts';
import {
  type ContextExecutor,
  type ContextMeta,
  type ContextStore,
  deltaIdOf,
  type DeltaRecord,
  GENESIS_PARENT,
  UNINITIALIZED_HASH,
} from '../contexts/index.ts';
import type { CallResult } from '../runtime/index.ts';
import type { BatchOp } from '../store/store.ts';
import { APPLY_RETRY, ApplyRetries, classifyApplyFailure, type ApplyFailureStats, type RetryPolicy } from './retries.ts';
import { originOf, PENDING_LIMITS, PendingDeltas, type Held, type PendingLimits } from './pending.ts';
import type { SyncStatusBoard } from './status.ts';

export const SYNC_ENTRY = '__calimero_sync_next';

/** Held deltas applied under one hold of a context's write lock (issue 23 §5). */
export const APPLY_BATCH = 32;

/** `refused`: its parents are missing and a bound of the held deltas keeps it out (pending.ts) */
export type ReceiveOutcome = 'applied' | 'duplicate' | 'pending' | 'refused' | 'deferred' | 'quarantined' | 'retrying' | 'unknown_context';

/** Ids of quarantined deltas remembered per context (the oldest forgotten first). */
const MAX_QUARANTINED_IDS = 10_000;

export interface ApplierDeps {
  records: ContextStore;
  executor: ContextExecutor;
  bus: EventBus;
  status: SyncStatusBoard;
  logger: Logger;
  /** the account a member key speaks for in the context's group (the guest's executor id) */
  accountOf: (contextId: string, key: string) => string | undefined;
  now: () => number;
  /** bounds of the deltas held for missing parents (pending.ts) */
  pending?: Partial<PendingLimits>;
  /** a delta the application refuses for good: its origin is penalised (the delta came signed by it) */
  penalize?: (origin: string, why: string) => void;
  /**
   * Why remote deltas of this context must wait, or undefined: its group moved to a version this
   * node's copy has not migrated to yet.
   */
  deferral?: (meta: ContextMeta) => string | undefined;
  /** held deltas applied per hold of the write lock (default APPLY_BATCH) */
  batch?: number;
  /** retries of merges that failed for a transient reason (retries.ts) */
  retry?: RetryPolicy;
}

export interface Snapshot {
  rootHash: string;
  heads: string[];
  rows: [string, string][];
  deltas: DeltaRecord[];
}

const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
const sortedHeads = (heads: Iterable<string>) => [...new Set(heads)].sort();

export class DeltaApplier {
  private readonly dags = new Map<string, Promise<OpDag>>();
  /** deltas waiting for their parents, bounded per context, per origin and in time */
  readonly pending: PendingDeltas;
  private readonly quarantined = new Map<string, Set<string>>();
  private readonly draining = new Map<string, Promise<void>>();
  /** failed merges by outcome since start */
  readonly failures: ApplyFailureStats = { retried: 0, recovered: 0, exhausted: 0, quarantined: 0 };
  private readonly retries: ApplyRetries;

  constructor(private readonly d: ApplierDeps) {
    this.pending = new PendingDeltas({ ...PENDING_LIMITS, ...d.pending }, d.now);
    this.retries = new ApplyRetries(d.retry ?? APPLY_RETRY, d.now, (delta, from) => {
      this.receive(delta, from).catch((e: unknown) => d.logger.warn({ contextId: delta.contextId, delta: delta.id, err: e }, 'retrying a remote delta failed'));
    }, this.failures);
  }

  /** Cancels the retries waiting (the node stops); their deltas are pulled again after a restart. */
  stop(): void {
    this.retries.stop();
  }

  /** The context's DAG of applied deltas (loaded from its records on first use). */
  dag(contextId: string): Promise<OpDag> {
    let dag = this.dags.get(contextId);
    if (!dag) {
      dag = this.load(contextId);
      this.dags.set(contextId, dag);
      dag.catch(() => this.dags.delete(contextId));
    }
    return dag;
  }

  private async load(contextId: string): Promise<OpDag> {
    const records: DeltaRecord[] = [];
    for await (const [, r] of this.d.records.deltas.entries({ prefix: `${contextId}/` })) records.push(r);
    return buildDag(records);
  }

  async knows(contextId: string, id: string): Promise<boolean> {
    return id === GENESIS_PARENT || (await this.dag(contextId)).has(id) || this.pending.has(contextId, id) || this.retries.holds(contextId, id);
  }

  pendingCount(contextId: string): number {
    return this.pending.count(contextId);
  }

  /** Parents pending deltas wait for that nobody sent yet. */
  async wanted(contextId: string): Promise<string[]> {
    if (this.pending.count(contextId) === 0) return [];
    const dag = await this.dag(contextId);
    const want = new Set<string>();
    for (const h of this.pending.values(contextId)) for (const p of h.delta.parents) if (p !== GENESIS_PARENT && !dag.has(p) && !this.pending.has(contextId, p)) want.add(p);
    return [...want];
  }

  /** Records this node holds that a holder of `theirHeads` lacks, parents first. */
  async lacking(contextId: string, theirHeads: readonly string[]): Promise<DeltaRecord[]> {
    const dag = await this.dag(contextId);
    const out: DeltaRecord[] = [];
    for (const id of dag.lacking(theirHeads)) {
      if (id === GENESIS_PARENT) continue;
      const r = await this.d.records.deltas.get(`${contextId}/${id}`);
      if (r) out.push(r);
    }
    return out;
  }

  /**
   * A verified remote delta: applied now, held for its parents, or ignored as a duplicate. Held
   * deltas it makes ready are applied after it in batches of `batch`, the lock released between
   * batches (`drain`), so a long catch-up lets reads and local writes in (issue 23 §5).
   */
  async receive(delta: DeltaRecord, from?: string): Promise<ReceiveOutcome> {
    // an origin whose held deltas expired holds nothing: an orphan of its is dropped before the
    // write lock, so a flood of them does not queue behind the context's reads and writes
    if (this.pending.suspected(originOf(delta)) && (await this.orphan(delta))) return 'refused';
    const { outcome, more } = await this.d.executor.locks.run(delta.contextId, true, async (): Promise<{ outcome: ReceiveOutcome; more: boolean }> => {
      const meta = await this.d.records.getMeta(delta.contextId);
      if (!meta) return { outcome: 'unknown_context', more: false };
      const dag = await this.dag(delta.contextId);
      if (dag.has(delta.id)) {
        // held by now (a snapshot brought it): no more retries
        if (this.retries.cancel(delta.contextId, delta.id)) this.d.status.setRetrying(delta.contextId, this.retries.count(delta.contextId));
        return { outcome: 'duplicate', more: false };
      }
      if (this.quarantined.get(delta.contextId)?.has(delta.id)) return { outcome: 'quarantined', more: false };
      if (this.retries.waits(delta.contextId, delta.id)) return { outcome: 'retrying', more: false };
      if (this.defers(meta)) {
        this.d.status.known(delta.contextId, delta.id);
        return { outcome: 'deferred', more: false };
      }
      if (delta.parents.some((p) => p !== GENESIS_PARENT && !dag.has(p))) return { outcome: this.hold(delta, from), more: false };
      const outcome = await this.applyOne(meta, dag, delta, from);
      return { outcome, more: await this.cascade(delta.contextId, dag, this.batch - 1) };
    });
    if (more) await this.drain(delta.contextId);
    return outcome;
  }

  /** deltas applied under one hold of the context's write lock during a catch-up */
  private get batch(): number {
    return Math.max(1, this.d.batch ?? APPLY_BATCH);
  }

  /**
   * Applies the held deltas that became ready, one batch per hold of the write lock: between two
   * batches the lock is released, and the reads and writes queued meanwhile (the lock is FIFO) run
   * on the state as of the last applied batch. One drain per context at a time; a second caller
   * waits for the running one, which also applies what became ready since.
   */
  private drain(contextId: string): Promise<void> {
    let running = this.draining.get(contextId);
    if (!running) {
      running = (async () => {
        for (;;) {
          const more = await this.d.executor.locks.run(contextId, true, async () => this.cascade(contextId, await this.dag(contextId), this.batch));
          if (!more) return;
        }
      })().finally(() => this.draining.delete(contextId));
      this.draining.set(contextId, running);
    }
    return running;
  }

  /**
   * Installs a snapshot: the responder's state rows verbatim, its delta records and its heads and
   * root, in one batch. On a context with no state here (joined, never synced); or, with `replace`,
   * on one whose every head the snapshot holds — this node has nothing the responder lacks, so the
   * snapshot's state contains its own and replacing it loses nothing. Refused (false) otherwise,
   * e.g. when a local write landed while the snapshot travelled.
   */
  async installSnapshot(contextId: string, snap: Snapshot, replace = false): Promise<boolean> {
    const installed = await this.d.executor.locks.run(contextId, true, async () => {
      const meta = await this.d.records.getMeta(contextId);
      const dag = await this.dag(contextId);
      if (!meta || this.defers(meta)) return false;
      const built = buildDag(snap.deltas);
      if (snap.heads.some((h) => !built.has(h))) throw new Error('snapshot heads name deltas it does not carry');
      const empty = meta.rootHash === UNINITIALIZED_HASH && dag.size <= 1;
      if (!empty && !(replace && meta.dagHeads.every((h) => built.has(h)))) return false;
      const stale: BatchOp[] = [];
      if (!empty) for await (const [k] of this.d.records.stateEntries(contextId)) stale.push(...this.d.records.writeOps('state', contextId, [[bytes(k), null]]));
      const ops: BatchOp[] = [
        ...stale,
        ...this.d.records.writeOps('state', contextId, snap.rows.map(([k, v]) => [bytes(k), bytes(v)])),
        ...snap.deltas.map((r) => this.d.records.deltaOp(r)),
        this.d.records.meta.putOp(contextId, { ...meta, rootHash: snap.rootHash, dagHeads: sortedHeads(snap.heads) }),
      ];
      await this.d.records.store.batch(ops);
      this.dags.set(contextId, Promise.resolve(built));
      for (const r of snap.deltas) this.d.status.held(contextId, r.id);
      this.announce(contextId, snap.rootHash, empty ? [] : snap.deltas.filter((r) => !dag.has(r.id)), built);
      return true;
    });
    if (installed) await this.drain(contextId);
    return installed;
  }

  /**
   * A delta a local call just committed (under the context's write lock): the DAG held in memory
   * takes it too, so remote children of it find their parent.
   */
  async noteLocal(delta: DeltaRecord): Promise<void> {
    const dag = this.dags.get(delta.contextId);
    if (!dag) return; // loaded from the store, with this delta, on first use
    const d = await dag;
    if (!d.has(delta.id)) d.add(delta.id, heightOf(d, delta.parents), delta.parents);
    // under the local call's lock, or just after it: the held deltas it made ready go through `drain`
    if (this.readyIn(delta.contextId, d)) void this.drain(delta.contextId).catch((e: unknown) => this.d.logger.warn({ err: e }, 'applying held deltas failed'));
  }

  /** Forgets what this node held in memory about a context (deleted or left). */
  forget(contextId: string): void {
    this.dags.delete(contextId);
    this.pending.forget(contextId);
    this.quarantined.delete(contextId);
    this.retries.forget(contextId);
  }

  /**
   * Tells subscribers of an installed snapshot: the events of every delta it brought that this node
   * had not applied, in causal order (height, then id), each as a `StateMutation` naming the root
   * the node now holds; one without events when none had any. A node that replaced its state loses
   * no event its subscribers would have seen had it replayed the deltas; a joiner's snapshot is the
   * history from before it joined, so `fresh` is empty there.
   */
  private announce(contextId: string, newRoot: string, fresh: readonly DeltaRecord[], built: OpDag): void {
    const order = (r: DeltaRecord) => built.seqOf(r.id) ?? 0n;
    const withEvents = fresh.filter((r) => (r.events?.length ?? 0) > 0).sort((x, y) => (order(x) < order(y) ? -1 : order(x) > order(y) ? 1 : x.id < y.id ? -1 : 1));
    if (withEvents.length === 0) {
      this.d.bus.publish({ type: 'context', contextId, kind: 'StateMutation', data: { newRoot, events: [] } });
      return;
    }
    for (const r of withEvents) this.d.bus.publish({ type: 'context', contextId, kind: 'StateMutation', data: { newRoot, events: eventsOf(r) } });
  }

  /** Whether remote deltas of the context wait for its migration (the status says why). */
  private defers(meta: ContextMeta): boolean {
    const why = this.d.deferral?.(meta);
    if (why) this.d.status.reason(meta.id, 'upgrade_pending', why);
    else this.d.status.clear(meta.id, 'upgrade_pending');
    return why !== undefined;
  }

  private async applyOne(meta: ContextMeta, dag: OpDag, delta: DeltaRecord, from?: string): Promise<ReceiveOutcome> {
    const { executor, records, status } = this.d;
    let result: CallResult;
    try {
      result = await executor.run(meta, {
        method: SYNC_ENTRY,
        input: bytes(delta.artifact),
        executorId: this.d.accountOf(meta.id, delta.author) ?? delta.author,
        deviceId: delta.author,
        readOnly: false,
      });
    } catch (e) {
      // the call never ran (the module or the store could not be read): this node's condition
      return this.failed(meta.id, delta, from, 'transient', 'HostError', (e as Error).message);
    }
    if (!result.ok) return this.failed(meta.id, delta, from, classifyApplyFailure(result), result.kind, result.message);
    const heads = sortedHeads([...meta.dagHeads.filter((h) => !delta.parents.includes(h)), delta.id]);
    const next: ContextMeta = { ...meta, dagHeads: heads, ...(result.commit ? { rootHash: Buffer.from(result.commit.rootHash).toString('hex') } : {}) };
    const ops: BatchOp[] = [
      ...(result.commit ? records.writeOps('state', meta.id, result.writes) : []),
      ...records.writeOps('private', meta.id, result.privateWrites),
      ...records.writeOps('index', meta.id, result.indexWrites),
      records.deltaOp(delta),
      records.meta.putOp(meta.id, next),
    ];
    await records.store.batch(ops);
    dag.add(delta.id, heightOf(dag, delta.parents), delta.parents);
    status.held(meta.id, delta.id);
    if (this.retries.applied(meta.id, delta.id)) status.setRetrying(meta.id, this.retries.count(meta.id));
    this.d.bus.publish({
      type: 'context',
      contextId: meta.id,
      kind: 'StateMutation',
      data: { newRoot: next.rootHash, events: eventsOf(delta) },
    });
    return 'applied';
  }

  /**
   * A merge that failed: retried later when the failure is transient and the bound allows,
   * quarantined otherwise (nothing of it stored either way).
   */
  private failed(contextId: string, delta: DeltaRecord, from: string | undefined, cls: 'transient' | 'deterministic', kind: string, message: string): ReceiveOutcome {
    const { status, logger } = this.d;
    const what = { contextId, delta: delta.id, kind, message };
    const short = `delta ${delta.id.slice(0, 12)}…`;
    if (cls === 'transient') {
      const next = this.retries.schedule(delta, from);
      if (typeof next === 'object' && 'attempt' in next) {
        status.setRetrying(contextId, this.retries.count(contextId), `${short}: ${message}; attempt ${next.attempt + 1} in ${next.delayMs} ms`);
        logger.info({ ...what, ...next }, 'a remote delta failed to apply for a transient reason; retrying');
        return 'retrying';
      }
      if (typeof next === 'string') {
        logger.info({ ...what, why: next }, 'a remote delta failed to apply for a transient reason; let go, peers advertise it again');
        return 'retrying';
      }
      status.setRetrying(contextId, this.retries.count(contextId));
      message = `${message} (still failing after ${next.exhausted} retries)`;
      logger.warn({ ...what, retries: next.exhausted }, 'a remote delta kept failing for a transient reason; retries exhausted, quarantined');
    } else {
      this.failures.quarantined++;
      logger.warn(what, 'a remote delta failed to apply; quarantined');
      // the application refuses it on every node: its signer sent garbage under a valid seal
      this.d.penalize?.(originOf(delta), `${short}: the application refuses it (${kind})`);
    }
    let q = this.quarantined.get(contextId);
    if (!q) this.quarantined.set(contextId, (q = new Set()));
    q.add(delta.id);
    if (q.size > MAX_QUARANTINED_IDS) q.delete(q.values().next().value!);
    status.quarantine(contextId, 'apply_failed', `${short}: ${message}`);
    return 'quarantined';
  }

  /** Whether a held delta of the context has every parent applied. */
  private readyIn(contextId: string, dag: OpDag): boolean {
    for (const h of this.pending.values(contextId)) if (h.delta.parents.every((p) => p === GENESIS_PARENT || dag.has(p))) return true;
    return false;
  }

  /**
   * Applies held deltas whose parents are now all present, at most `limit` (the caller holds the
   * write lock). True when it stopped at the limit with more possibly ready: the caller releases the
   * lock and goes on (`drain`).
   */
  private async cascade(contextId: string, dag: OpDag, limit: number): Promise<boolean> {
    const isReady = (h: Held) => h.delta.parents.every((p) => p === GENESIS_PARENT || dag.has(p));
    // one scan for what is ready now; after that only the held children of what gets applied are
    // looked at (a long chain arriving children first must not cost a scan per delta)
    const queue: string[] = [];
    for (const h of this.pending.values(contextId)) if (isReady(h)) queue.push(h.delta.id);
    let applied = 0;
    let more = false;
    for (let i = 0; i < queue.length; i++) {
      const ready = this.pending.get(contextId, queue[i]!);
      if (!ready || !isReady(ready)) continue;
      if (applied >= limit) {
        more = true;
        break;
      }
      const meta = await this.d.records.getMeta(contextId);
      if (!meta || this.defers(meta)) break; // held ones stay held until the context migrated
      this.pending.take(contextId, ready.delta.id);
      if (!dag.has(ready.delta.id)) {
        await this.applyOne(meta, dag, ready.delta, ready.from);
        applied++;
      }
      queue.push(...this.pending.childrenOf(contextId, ready.delta.id));
    }
    this.d.status.setPending(contextId, this.pendingCount(contextId));
    return more;
  }

  /** Holds a delta for its parents, within the bounds (pending.ts); the status says what is held. */
  private hold(delta: DeltaRecord, from?: string): ReceiveOutcome {
    const outcome = this.pending.hold(delta, from);
    const n = this.pending.count(delta.contextId);
    this.d.status.setPending(delta.contextId, n);
    if (outcome === 'origin_full' || outcome === 'suspect') return 'refused';
    if (n > 0) this.d.status.reason(delta.contextId, 'parents_pending', `${n} delta(s) wait for parents not received yet`);
    return 'pending';
  }

  /**
   * Drops the deltas held since before `cutoff` whose parents never came (the caller asked every
   * connected member for them since), with the held deltas waiting on them; the status says so.
   */
  expire(contextId: string, cutoff: number): Held[] {
    const gone = this.pending.expire(contextId, cutoff);
    if (gone.length === 0) return gone;
    const n = this.pending.count(contextId);
    this.d.status.setPending(contextId, n);
    if (n > 0) this.d.status.reason(contextId, 'parents_pending', `${n} delta(s) wait for parents not received yet`);
    const origins = [...new Set(gone.map((h) => originOf(h.delta).slice(0, 12)))];
    this.d.status.expired(contextId, gone.length, `from ${origins.slice(0, 4).map((o) => `${o}…`).join(', ')}${origins.length > 4 ? ` and ${origins.length - 4} more` : ''}: their parents never arrived, though asked for from every connected member; their origins hold no deltas for a while`);
    return gone;
  }

  /** Whether a delta names a parent this node does not hold (read without the write lock). */
  private async orphan(delta: DeltaRecord): Promise<boolean> {
    const dag = await this.dag(delta.contextId);
    return delta.parents.some((p) => p !== GENESIS_PARENT && !dag.has(p));
  }
}

/** Height of a delta with these parents: one above the highest (the genesis parent is height 0). */
/** A delta's recorded events as a `StateMutation` frame carries them (bytes as numbers, as for a local call). */
function eventsOf(delta: DeltaRecord): { kind: string; data: number[]; handler: string | null }[] {
  return (delta.events ?? []).map((e) => ({ kind: e.kind, data: [...Buffer.from(e.data, 'hex')], handler: e.handler }));
}

function heightOf(dag: OpDag, parents: readonly string[]): bigint {
  let max = 0n;
  for (const p of parents) {
    const s = dag.seqOf(p);
    if (s !== undefined && s > max) max = s;
  }
  return max + 1n;
}

/**
 * A DAG over records given in any order, rooted at the genesis parent (parents before children,
 * without recursion: a long history is a long chain). Throws when a record names a parent that is
 * not among them, or when its id does not re-derive from its content.
 */
export function buildDag(records: readonly DeltaRecord[]): OpDag {
  const dag = new OpDag();
  dag.add(GENESIS_PARENT, 0n, []);
  const byId = new Map(records.map((r) => [r.id, r]));
  const waiting = new Map<string, number>();
  const children = new Map<string, string[]>();
  const ready: DeltaRecord[] = [];
  for (const r of byId.values()) {
    if (deltaIdOf(r.parents, bytes(r.artifact)) !== r.id) throw new Error(`delta ${r.id} does not match its content`);
    const open = r.parents.filter((p) => p !== GENESIS_PARENT);
    for (const p of open) {
      if (!byId.has(p)) throw new Error(`delta ${r.id} names a parent ${p} that is not there`);
      children.set(p, [...(children.get(p) ?? []), r.id]);
    }
    waiting.set(r.id, open.length);
    if (open.length === 0) ready.push(r);
  }
  while (ready.length > 0) {
    const r = ready.pop()!;
    dag.add(r.id, heightOf(dag, r.parents), r.parents);
    for (const c of children.get(r.id) ?? []) {
      const left = waiting.get(c)! - 1;
      waiting.set(c, left);
      if (left === 0) ready.push(byId.get(c)!);
    }
  }
  if (dag.size !== byId.size + 1) throw new Error('delta records form a cycle');
  return dag;
}
