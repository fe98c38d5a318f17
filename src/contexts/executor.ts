/**
 * Runs one method call of a context's application and commits what it did (runtime.md §3 "A
 * method call end to end"). The WebAssembly host (`Runtime`) only reports; this module decides:
 *
 * - a failed call (trap, panic, application error, deadline) persists nothing and emits nothing;
 * - a successful call persists, in ONE store batch, its replicated writes (only when it committed
 *   a root, as the reference), its private and index writes, the new root hash and the new DAG
 *   head (a delta record, see `DeltaRecord`), then publishes `StateMutation` on the event bus
 *   once the batch is durable — when the call committed or emitted events (not for pure reads);
 * - read-only calls run on a shared lock and commit nothing; write calls are serialised per context;
 *   a call that changed nothing persists nothing, and calls of methods seen changing nothing run
 *   under the shared lock first, whatever the ABI says (read-path.ts);
 * - calls pending per context and in all are bounded by count and argument bytes (admission.ts):
 *   past a bound a call is refused with 503 before it waits for the lock (issue #23 §4).
 */
import { createHash } from 'node:crypto';
import type { ApplicationCatalog } from '../applications/index.ts';
import type { Clock } from '../clock.ts';
import { toHex as hex } from '../crypto/ids.ts';
import type { EventBus } from '../bus.ts';
import type { CallResult, CallSuccess, Runtime } from '../runtime/index.ts';
import type { BatchOp } from '../store/store.ts';
import { CallAdmission } from './admission.ts';
import { ContextLocks, LockWaitAborted } from './lock.ts';
import { changedSomething, ReadHints } from './read-path.ts';
import { wasmOf } from './releases.ts';
import type { ContextStore } from './store.ts';
import { GENESIS_PARENT, type ContextMeta, type DeltaRecord } from './types.ts';
import { CALL_DEADLINE_MS } from '../config/defaults.ts';

export interface ExecutorDeps {
  /**
   * Stamps each delta made here before it is stored: its HLC, origin and the origin's signature
   * (src/sync/stamp.ts); absent on a node without sync.
   */
  stampDelta?: (delta: DeltaRecord) => Partial<Pick<DeltaRecord, 'hlc' | 'origin' | 'signature'>>;
  store: ContextStore;
  runtime: Runtime;
  applications: ApplicationCatalog;
  bus: EventBus;
  clock: Clock;
  /**
   * Throws (a HearthError) when a call's outcome may not be committed here: this node was removed
   * from the context's group, so its writes would never replicate (issue 23 §3). Checked before the
   * commit, so a refused call persists nothing.
   */
  mayCommit?: (meta: ContextMeta) => void;
  /** bounds on calls pending per context and in all (issue #23 §4); the defaults when absent */
  admission?: CallAdmission;
  /** a call's wall-clock budget, its wait for a worker included (config `[runtime] deadline_ms`) */
  callDeadlineMs?: number;
}

export interface CallInput {
  method: string;
  input: Uint8Array;
  /** the account the call runs as (hex) */
  executorId: string;
  /** the member key executing the call (hex) */
  deviceId: string;
  readOnly: boolean;
  signal?: AbortSignal;
  /** a delegated call: recorded on its delta */
  delegation?: DeltaRecord['delegation'];
  /**
   * store ops persisted with the call's outcome whatever it is: in the commit's batch when the call
   * writes, alone when it fails or only reads (a delegated call's spent warrant nonce)
   */
  extra?: BatchOp[];
}

const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

/** ids (context, account, member key) as bytes, made once per id rather than three times per call (issue #33) */
const IDS_KEPT = 4_096;
const idBytes = new Map<string, Uint8Array>();
function idOf(hex: string): Uint8Array {
  let b = idBytes.get(hex);
  if (b === undefined) {
    if (idBytes.size >= IDS_KEPT) idBytes.delete(idBytes.keys().next().value!);
    b = bytes(hex);
    idBytes.set(hex, b);
  }
  return b;
}

/** `SHA-256(parent ids in order ‖ artifact)`: the delta id (runtime.md §5 `compute_id`, hearth's encoding). */
export function deltaIdOf(parents: readonly string[], artifact: Uint8Array): string {
  const h = createHash('sha256');
  for (const p of parents) h.update(Buffer.from(p, 'hex'));
  return h.update(artifact).digest('hex');
}

/** A delta this node just made and persisted (context sync publishes it). */
export type CommitListener = (delta: DeltaRecord, meta: ContextMeta) => void;

export class ContextExecutor {
  readonly locks = new ContextLocks();
  readonly admission: CallAdmission;
  private readonly hints = new ReadHints();
  private readonly committed = new Set<CommitListener>();

  constructor(private readonly d: ExecutorDeps) {
    this.admission = d.admission ?? new CallAdmission();
  }

  /** Hears of every delta a local call commits, after its batch is durable. */
  onCommit(listener: CommitListener): () => void {
    this.committed.add(listener);
    return () => this.committed.delete(listener);
  }

  /**
   * Runs the call against the context's stored state; nothing is persisted. `shared`: the caller
   * holds the context's shared lock (the runtime may then batch the call with others: runtime.ts).
   */
  run(meta: ContextMeta, call: CallInput, shared = call.readOnly): Promise<CallResult> {
    // a context pinned to its version (most) knows its module key without waiting (issue #33)
    if (meta.bundleBlobId != null) return this.runAs(meta.bundleBlobId, meta, call, shared);
    return this.d.applications.get(meta.applicationId).then((app) => this.runAs(app?.bundleBlobId ?? meta.applicationId, meta, call, shared));
  }

  private runAs(bundle: string, meta: ContextMeta, call: CallInput, shared: boolean): Promise<CallResult> {
    const { store, runtime, applications } = this.d;
    const views = store.viewsOf(meta.id);
    // The runtime caches compiled modules by this key: the bundle's blob id changes with each
    // version (the application id does not), and a multi-service bundle holds one module per service.
    return runtime.call({
      applicationId: meta.serviceName ? `${bundle}:${meta.serviceName}` : bundle,
      wasm: () => wasmOf(applications, meta),
      method: call.method,
      input: call.input,
      // shared between calls: the runtime only reads them (and copies them into the job)
      contextId: idOf(meta.id),
      executorId: idOf(call.executorId),
      deviceId: idOf(call.deviceId),
      state: views.state,
      privateState: views.private,
      index: views.index,
      readOnly: call.readOnly,
      ...(shared ? { shared } : {}),
      stateVersion: store.stateVersion(meta.id),
      changedSince: (version) => store.changedSince(meta.id, version),
      // the runtime bounds the call's run by this, and its wait for a worker too
      deadlineMs: this.d.callDeadlineMs ?? CALL_DEADLINE_MS,
      signal: call.signal,
    });
  }

  /**
   * Has the runtime compile the context's module and ready a worker with it, ahead of its first
   * call (the node does this for its contexts at start; issue #22). The module key is the one
   * `run` uses.
   */
  async prepare(meta: ContextMeta): Promise<void> {
    const { runtime, applications } = this.d;
    if (!runtime.prepare) return;
    const bundle = meta.bundleBlobId ?? (await applications.get(meta.applicationId))?.bundleBlobId ?? meta.applicationId;
    await runtime.prepare({ applicationId: meta.serviceName ? `${bundle}:${meta.serviceName}` : bundle, wasm: () => wasmOf(applications, meta) });
  }

  /**
   * Persists a successful call in one batch together with `extra` ops (context creation adds the
   * context's meta and first member), then publishes its StateMutation. Answers the new meta.
   */
  async commit(meta: ContextMeta, result: CallSuccess, author: string, extra: BatchOp[] = [], delegation?: DeltaRecord['delegation']): Promise<ContextMeta> {
    const { store } = this.d;
    const ops: BatchOp[] = [...extra];
    const next: ContextMeta = { ...meta, dagHeads: [...meta.dagHeads] };
    let made: DeltaRecord | undefined;
    if (result.commit) {
      ops.push(...store.writeOps('state', meta.id, result.writes));
      const parents = meta.dagHeads.length > 0 ? meta.dagHeads : [GENESIS_PARENT];
      const unstamped: DeltaRecord = {
        id: deltaIdOf(parents, result.commit.artifact),
        contextId: meta.id,
        parents,
        artifact: hex(result.commit.artifact),
        rootHash: hex(result.commit.rootHash),
        author,
        ...(delegation ? { delegation } : {}),
        timestampMs: this.d.clock.now(),
        ...(result.events.length > 0 ? { events: result.events.map((e) => ({ kind: e.kind, data: hex(e.data), handler: e.handler })) } : {}),
      };
      const delta: DeltaRecord = this.d.stampDelta ? { ...unstamped, ...this.d.stampDelta(unstamped) } : unstamped;
      ops.push(store.deltaOp(delta));
      next.rootHash = delta.rootHash;
      next.dagHeads = [delta.id];
      made = delta;
    }
    ops.push(...store.writeOps('private', meta.id, result.privateWrites));
    ops.push(...store.writeOps('index', meta.id, result.indexWrites));
    ops.push(store.meta.putOp(meta.id, next));
    await store.store.batch(ops);
    if (made) for (const l of this.committed) l(made, next);
    if (result.commit || result.events.length > 0) {
      this.d.bus.publish({
        type: 'context',
        contextId: meta.id,
        kind: 'StateMutation',
        data: {
          newRoot: next.rootHash,
          events: result.events.map((e) => ({ kind: e.kind, data: [...e.data], handler: e.handler })),
        },
      });
    }
    return next;
  }

  /**
   * One call on an existing context under its lock: the meta is re-read inside the lock so a
   * write sees the heads its predecessor left. `prepare` may refuse (throw) after the re-read.
   * The call counts as pending (admission.ts) from here until it is done; past a bound it is
   * refused (503) before it waits for the lock or changes anything.
   */
  async call(
    contextId: string,
    call: CallInput,
    prepare: (meta: ContextMeta) => void,
  ): Promise<{ meta: ContextMeta; result: CallResult }> {
    const release = this.admission.admit(contextId, call.input.length);
    try {
      return await this.callAdmitted(contextId, call, prepare);
    } catch (err) {
      if (!(err instanceof LockWaitAborted)) throw err;
      // the caller went away while the call waited for the lock: it never ran; its extra ops are
      // kept as for any call that failed (a delegated call's nonce is spent)
      const meta = await this.d.store.getMeta(contextId);
      if (!meta) throw new ContextGone(contextId);
      if (call.extra?.length) await this.d.store.store.batch(call.extra);
      return { meta, result: { ok: false, kind: 'Aborted', message: err.message, logs: [] } };
    } finally {
      release();
    }
  }

  private callAdmitted(
    contextId: string,
    call: CallInput,
    prepare: (meta: ContextMeta) => void,
  ): Promise<{ meta: ContextMeta; result: CallResult }> {
    const checked = (meta: ContextMeta | undefined) => {
      if (!meta) throw new ContextGone(contextId);
      prepare(meta);
      return meta;
    };
    /** the meta as the store has it now: from memory without waiting when it is kept (issue #33) */
    const metaOf = (): ContextMeta | Promise<ContextMeta> => {
      const kept = this.d.store.metaNow(contextId);
      return kept ? checked(kept.value) : this.d.store.getMeta(contextId).then(checked);
    };
    /** the call's outcome persisted: its extra ops alone when it failed or changed nothing */
    const conclude = async (meta: ContextMeta, result: CallResult) => {
      if (!call.readOnly) this.hints.observed(contextId, call.method, result);
      if (call.readOnly || !changedSomething(result)) {
        if (call.extra?.length) await this.d.store.store.batch(call.extra);
        return { meta, result };
      }
      this.d.mayCommit?.(meta);
      return { meta: await this.commit(meta, result, call.deviceId, call.extra, call.delegation), result };
    };
    // --- a read-only call: the shared lock, nothing to commit (no promise of its own beyond the run's)
    if (call.readOnly) {
      const read = (meta: ContextMeta) => this.run(meta, call).then((result) => conclude(meta, result));
      return this.locks.run(contextId, false, () => {
        const got = metaOf();
        return got instanceof Promise ? got.then(read) : read(got);
      }, call.signal);
    }
    const write = async () => {
      // --- read-path.ts: a method seen changing nothing runs under the shared lock first
      let attempt: { stamp: number; result: CallResult } | undefined;
      if (this.hints.tryShared(contextId, call.method)) {
        const shared = await this.locks.run(contextId, false, async () => {
          const stamp = this.locks.stamp(contextId);
          const meta = await metaOf();
          const result = await this.run(meta, call, true);
          return changedSomething(result) ? { stamp, result } : await conclude(meta, result);
        }, call.signal);
        if (!('stamp' in shared)) return shared;
        attempt = shared;
      }
      // --- exclusive
      return this.locks.run(contextId, true, async () => {
        const got = metaOf();
        const meta = got instanceof Promise ? await got : got;
        // no writer since the shared attempt: its outcome was computed against this very state
        if (attempt && this.locks.stamp(contextId) === attempt.stamp) return conclude(meta, attempt.result);
        return conclude(meta, await this.run(meta, call));
      }, call.signal);
    };
    return write();
  }
}

/** The context was deleted between the caller's check and the lock. */
export class ContextGone extends Error {
  override name = 'ContextGone';
  constructor(readonly contextId: string) {
    super(`context '${contextId}' not found`);
  }
}
