/**
 * The node's embedded key-value store: the interface every domain persists through.
 *
 * Values are JSON documents (u64 values are kept as decimal strings by their owners, never as JS
 * numbers) or raw bytes. Keys are strings, ordered lexicographically. A "space" is a typed sub-space
 * (one prefix); a multi-key change across spaces is one atomic `batch`, so a crash never leaves half
 * an operation applied.
 */

export type Codec = 'json' | 'bytes';

export interface PutOp {
  type: 'put';
  space: string;
  key: string;
  value: unknown;
}

export interface DelOp {
  type: 'del';
  space: string;
  key: string;
}

export type BatchOp = PutOp | DelOp;

export interface IterateOptions {
  /** only keys starting with this prefix */
  prefix?: string;
  /** keys strictly greater than this one (for paging) */
  after?: string;
  limit?: number;
  reverse?: boolean;
}

export interface Space<T> {
  readonly name: string;
  get(key: string): Promise<T | undefined>;
  put(key: string, value: T): Promise<void>;
  del(key: string): Promise<void>;
  entries(opts?: IterateOptions): AsyncIterable<[string, T]>;
  /** batch op builders, so a service can compose one atomic change across spaces */
  putOp(key: string, value: T): PutOp;
  delOp(key: string): DelOp;
}

/**
 * When a batch is seen by observers: `start` before any of it is written, `end` once it is durable
 * (or failed: then none of it was written). Caches over the store invalidate on both (cache.ts).
 */
export type BatchPhase = 'start' | 'end';
export type BatchObserver = (ops: readonly BatchOp[], phase: BatchPhase) => void;

/** Whether the store can read and write now, and if not, why. */
export type StoreHealth = { ok: true } | { ok: false; reason: string };

export interface Store {
  open(): Promise<void>;
  close(): Promise<void>;
  /** true when the store is healthy (see `health`) */
  ping(): Promise<boolean>;
  /** a read and a write round-trip; the reason when they do not */
  health(): Promise<StoreHealth>;
  /**
   * The last known health without touching the database (what the probe routes answer): a failed
   * operation shows at once; the read-write probe is refreshed by `health()`, which the node's
   * store monitor (node/store-supervisor.ts) calls every few seconds.
   */
  status(): StoreHealth;
  space<T>(name: string, codec?: Codec): Space<T>;
  batch(ops: BatchOp[]): Promise<void>;
  /** Tells `observer` about every batch (and put/del) of every space; answers the unsubscribe. */
  observe(observer: BatchObserver): () => void;
}

/** The observers of one store: each is told in turn; one that throws does not stop the others. */
export class BatchObservers {
  private readonly all = new Set<BatchObserver>();

  add(observer: BatchObserver): () => void {
    this.all.add(observer);
    return () => this.all.delete(observer);
  }

  tell(ops: readonly BatchOp[], phase: BatchPhase): void {
    for (const o of this.all) {
      try {
        o(ops, phase);
      } catch {
        // an observer's fault must not fail or hold up the write
      }
    }
  }
}

/** Collects an async iterable of entries into an array (small listings only). */
export async function collect<T>(it: AsyncIterable<[string, T]>): Promise<[string, T][]> {
  const out: [string, T][] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** Space names are single path-like tokens; `!` is the separator inside the backing store. */
export function assertSpaceName(name: string): void {
  if (!/^[a-z][a-z0-9_.-]*$/.test(name)) throw new Error(`invalid store space name: ${name}`);
}
