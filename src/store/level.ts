/**
 * classic-level (LevelDB) implementation of the store interface. One database in the node home's
 * data directory; each space is a sublevel, and batches across spaces go through the root database
 * so they are written atomically (LevelDB write batches are all-or-nothing, also across a kill -9).
 *
 * Durability (issue #17 finding 9; docs/contexts.md "Durability"): every write is synced — the
 * batch that acknowledges a change reaches the disk (fsync of LevelDB's log) before its promise
 * resolves, so an answered write survives power loss, not only a process crash. Concurrent writers
 * share one fsync: batches that arrive while a write is in flight are committed together next, as
 * one LevelDB batch (group commit), which keeps the cost bounded under load (bench/durability.ts).
 *
 * Reads of one key are synchronous once a space is open (`getSync`: a memtable or block-cache
 * lookup), behind the same promise-returning API: an asynchronous read cost the main thread a hop
 * to libuv's thread pool and back, more than the read itself (issue #33).
 *
 * Failure (issue #17 finding 1): an IO error (e.g. no file descriptor left to open a table file)
 * leaves LevelDB refusing every write until it is reopened. The first one marks the store failed,
 * with its cause, and tells the listeners (the node's supervisor reopens it or stops the node);
 * until then every operation answers 503 instead of a 500, and `health()` says why.
 */
import { chmod, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { unavailable, type HearthError } from '../errors.ts';
import type { BatchObserver, BatchOp, Codec, IterateOptions, Space, Store, StoreHealth } from './store.ts';
import { assertSpaceName, BatchObservers } from './store.ts';
import { decodeValue, encodeValue } from './codec.ts';

/** The part of a sublevel this store uses (the library's generics do not survive sublevel typing). */
interface Sub {
  get(key: string): Promise<Uint8Array | undefined>;
  getSync(key: string): Uint8Array | undefined;
  /** 'open' once usable synchronously (a sublevel made on first use opens a tick later) */
  readonly status: string;
  /** what the sublevel puts before its keys in the root database (`!name!`) */
  readonly prefix: string;
  iterator(range: Record<string, unknown>): AsyncIterable<[string, Uint8Array]>;
  open(): Promise<void>;
}

export interface LevelStoreOptions {
  /** table files LevelDB keeps open at most (its own cap; the rest of the descriptors serve connections) */
  maxOpenFiles?: number;
}

/** A batch op on the root database: the sublevel's prefix is in the key. */
type RootOp = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

/** LevelDB's table-file cap: well inside the descriptors the HTTP server leaves free (FD_RESERVE). */
export const DEFAULT_MAX_OPEN_FILES = 256;
/** Ops of queued batches written together at most (one batch is never split, whatever its size). */
const MAX_GROUP_OPS = 20_000;
/** What a caller is told to wait while the store is being reopened. */
const RETRY_AFTER_SECS = 5;
const PROBE_KEY = '\u0000probe';
/** A healthy probe is reused this long: probes are public, and each one writes. */
const PROBE_REUSE_MS = 1_000;

/** Whether an error means the database cannot do IO any more (as opposed to a bad request of ours). */
export function isStoreIoError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (code === 'LEVEL_IO_ERROR' || code === 'LEVEL_CORRUPTION' || code === 'EMFILE' || code === 'ENFILE' || code === 'ENOSPC' || code === 'EIO') return true;
    if (typeof message === 'string' && /IO error|Too many open files|No space left|Input\/output error/i.test(message)) return true;
  }
  return false;
}

export class LevelStore implements Store {
  private readonly db: ClassicLevel<string, Uint8Array>;
  private readonly subs = new Map<string, { sub: Sub; codec: Codec }>();
  private failure?: string;
  private lastHealthy = 0;
  /** what the last `health()` found (see `status`) */
  private lastProbe: StoreHealth = { ok: true };
  private readonly listeners = new Set<(cause: string) => void>();
  private readonly observers = new BatchObservers();

  constructor(
    readonly location: string,
    opts: LevelStoreOptions = {},
  ) {
    this.db = new ClassicLevel<string, Uint8Array>(location, {
      keyEncoding: 'utf8',
      valueEncoding: 'view',
      maxOpenFiles: opts.maxOpenFiles ?? DEFAULT_MAX_OPEN_FILES,
    });
  }

  async open(): Promise<void> {
    // The store's files hold keys' password hashes and application state: private to the node's
    // user (0600), whatever umask the node was started with. LevelDB creates files with the
    // process umask, so the node sets it; files of older homes are tightened once here.
    process.umask(0o077);
    await this.db.open();
    await tighten(this.location);
    await this.probe();
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /**
   * Closes and reopens the database (after an IO error LevelDB refuses writes until reopened),
   * then probes a write. Resolves once the store works again; rejects otherwise.
   */
  async reopen(): Promise<void> {
    await this.db.close().catch(() => undefined);
    await this.db.open();
    for (const { sub } of this.subs.values()) await sub.open();
    await this.db.put(PROBE_KEY, new Uint8Array([1]), { sync: true });
    this.failure = undefined;
    this.lastHealthy = Date.now();
    this.lastProbe = { ok: true };
  }

  /** Told once per failure (until a successful reopen), with the cause. */
  onFailure(listener: (cause: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get failed(): string | undefined {
    return this.failure;
  }

  /** A read and a write round-trip (a database that reads but cannot write is not healthy). */
  async health(): Promise<StoreHealth> {
    if (this.failure || this.db.status !== 'open') return this.status();
    // any failing operation sets `failure` at once, so a recent healthy probe still holds
    if (Date.now() - this.lastHealthy < PROBE_REUSE_MS) return { ok: true };
    const health = await this.probe();
    if (health.ok) this.lastHealthy = Date.now();
    return health;
  }

  /** One read-write round-trip; what `status` answers until the next. */
  private async probe(): Promise<StoreHealth> {
    try {
      await this.db.put(PROBE_KEY, new Uint8Array([1]));
      await this.db.get(PROBE_KEY);
      this.lastProbe = { ok: true };
    } catch (err) {
      if (isStoreIoError(err)) this.fail(err);
      this.lastProbe = { ok: false, reason: this.failure ?? `the store does not answer: ${(err as Error).message}` };
    }
    return this.lastProbe;
  }

  status(): StoreHealth {
    if (this.failure) return { ok: false, reason: this.failure };
    if (this.db.status !== 'open') return { ok: false, reason: `the store is ${this.db.status}` };
    return this.lastProbe;
  }

  async ping(): Promise<boolean> {
    return (await this.health()).ok;
  }

  private fail(err: unknown): void {
    if (this.failure) return;
    const e = err as { message?: string; cause?: { message?: string } };
    this.failure = [e.message, e.cause?.message].filter(Boolean).join(': ') || String(err);
    for (const l of this.listeners) l(this.failure);
  }

  private unavailableError(): HearthError {
    const e = unavailable(`The node's store is unavailable (${this.failure}); it is being reopened, retry later`);
    e.extra.retryAfterSecs = RETRY_AFTER_SECS;
    return e;
  }

  /** Runs a database operation; an IO error fails the store and answers 503. */
  private async guard<T>(op: () => Promise<T>): Promise<T> {
    if (this.failure) throw this.unavailableError();
    try {
      return await op();
    } catch (err) {
      if (!isStoreIoError(err)) throw err;
      this.fail(err);
      throw this.unavailableError();
    }
  }

  /** `guard` for a synchronous operation. */
  private guardSync<T>(op: () => T): T {
    if (this.failure) throw this.unavailableError();
    try {
      return op();
    } catch (err) {
      if (!isStoreIoError(err)) throw err;
      this.fail(err);
      throw this.unavailableError();
    }
  }

  space<T>(name: string, codec: Codec = 'json'): Space<T> {
    assertSpaceName(name);
    const sub = this.subOf(name, codec);
    const store = this;
    return {
      name,
      // synchronous (module doc): a read never waits for a write's fsync, LevelDB syncs its log
      // outside the lock reads take; until the sublevel is open (its first tick, a reopen) it waits
      async get(key) {
        const raw = sub.status === 'open' ? store.guardSync(() => sub.getSync(key)) : await store.guard(() => sub.get(key));
        return raw === undefined ? undefined : decodeValue<T>(codec, raw);
      },
      put: (key, value) => this.batch([{ type: 'put', space: name, key, value }]),
      del: (key) => this.batch([{ type: 'del', space: name, key }]),
      entries(opts?: IterateOptions) {
        return store.iterate<T>(sub, codec, opts ?? {});
      },
      putOp: (key, value) => ({ type: 'put', space: name, key, value }),
      delOp: (key) => ({ type: 'del', space: name, key }),
    };
  }

  /**
   * One atomic, synced write (see the module doc). Batches that arrive while a synced write is in
   * flight wait and are then written together, in arrival order, as one LevelDB batch with one
   * fsync (group commit): each caller's batch stays all-or-nothing, and each promise resolves only
   * once its ops are on disk.
   */
  async batch(ops: BatchOp[]): Promise<void> {
    if (ops.length === 0) return;
    // encoded before queueing: a value that cannot be encoded fails its own batch, not a group;
    // keys as the root database holds them (the sublevel's prefix and the key, both UTF-8)
    const chained = ops.map((op): RootOp => {
      const entry = this.subs.get(op.space);
      if (!entry) throw new Error(`unknown store space: ${op.space}`);
      const key = entry.sub.prefix + op.key;
      return op.type === 'put' ? { type: 'put', key, value: encodeValue(entry.codec, op.value) } : { type: 'del', key };
    });
    if (this.failure) throw this.unavailableError();
    this.observers.tell(ops, 'start');
    return new Promise<void>((resolve, reject) => {
      const end = () => this.observers.tell(ops, 'end');
      this.pending.push({
        ops: chained,
        resolve: () => (end(), resolve()),
        reject: (err) => (end(), reject(err)),
      });
      this.flush();
    });
  }

  observe(observer: BatchObserver): () => void {
    return this.observers.add(observer);
  }

  private readonly pending: { ops: RootOp[]; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private flushing = false;

  private flush(): void {
    if (this.flushing || this.pending.length === 0) return;
    this.flushing = true;
    const group: typeof this.pending = [];
    let size = 0;
    while (this.pending.length > 0 && (group.length === 0 || size + this.pending[0].ops.length <= MAX_GROUP_OPS)) {
      const next = this.pending.shift()!;
      group.push(next);
      size += next.ops.length;
    }
    const ops = group.length === 1 ? group[0].ops : group.flatMap((g) => g.ops);
    this.guard(() => this.write(ops)).then(
      () => {
        for (const g of group) g.resolve();
      },
      (err: unknown) => {
        for (const g of group) g.reject(err);
      },
    ).finally(() => {
      this.flushing = false;
      this.flush();
    });
  }

  /**
   * One synced LevelDB write of `ops`. Through a chained batch once the database is open: each op
   * goes to the native batch as it is added, where an array batch has every op object read back
   * field by field by the binding and copied with its options first (issue #33: ~4 × the main
   * thread's time for a `set`'s eleven ops). An array batch while it opens, which waits for it.
   */
  private write(ops: RootOp[]): Promise<void> {
    if (this.db.status !== 'open') return this.db.batch(ops, { sync: true });
    const batch = this.db.batch();
    try {
      for (const op of ops) {
        if (op.type === 'put') batch.put(op.key, op.value);
        else batch.del(op.key);
      }
    } catch (err) {
      void batch.close().catch(() => undefined);
      throw err;
    }
    return batch.write({ sync: true });
  }

  private subOf(name: string, codec: Codec): Sub {
    const existing = this.subs.get(name);
    if (existing) return existing.sub;
    const sub = this.db.sublevel<string, Uint8Array>(name, { keyEncoding: 'utf8', valueEncoding: 'view' }) as unknown as Sub;
    this.subs.set(name, { sub, codec });
    return sub;
  }

  private async *iterate<T>(sub: Sub, codec: Codec, opts: IterateOptions): AsyncIterable<[string, T]> {
    if (this.failure) throw this.unavailableError();
    const range: Record<string, unknown> = { reverse: opts.reverse ?? false };
    if (opts.limit !== undefined) range.limit = opts.limit;
    const prefix = opts.prefix ?? '';
    const upper = prefix + '\uffff';
    range.gte = prefix;
    range.lt = upper;
    if (opts.after !== undefined) {
      // paging cursor: narrow the bound on the side we are walking away from
      if (opts.reverse) range.lt = opts.after < upper ? opts.after : upper;
      else if (opts.after >= prefix) {
        delete range.gte;
        range.gt = opts.after;
      }
    }
    try {
      for await (const [key, raw] of sub.iterator(range)) {
        yield [key, decodeValue<T>(codec, raw)];
      }
    } catch (err) {
      if (!isStoreIoError(err)) throw err;
      this.fail(err);
      throw this.unavailableError();
    }
  }
}

/** Makes the store directory 0700 and its files 0600 (homes created before the umask was set). */
async function tighten(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const name of await readdir(dir)) await chmod(join(dir, name), 0o600).catch(() => undefined);
}
