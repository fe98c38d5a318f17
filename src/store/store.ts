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

/** Whether the store can read and write now, and if not, why. */
export type StoreHealth = { ok: true } | { ok: false; reason: string };

export interface Store {
  open(): Promise<void>;
  close(): Promise<void>;
  /** true when the store is healthy (see `health`) */
  ping(): Promise<boolean>;
  /** a read and a write round-trip; the reason when they do not */
  health(): Promise<StoreHealth>;
  space<T>(name: string, codec?: Codec): Space<T>;
  batch(ops: BatchOp[]): Promise<void>;
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
