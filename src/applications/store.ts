/**
 * Persistence of installed applications: one JSON document per application id in the space
 * `applications`. An application (package + signer) keeps every version this node installed until
 * it is uninstalled; `current` names the one the row shows (the last installed, as the reference's
 * "latest fetched" pointer). Each version holds references on its blobs in the blob store.
 *
 * Every application call looks its application up (and a pinned version among all of them): the
 * records are cached (store/cache.ts), invalidated by the store's batches (issue #14).
 */
import { KeyedCache } from '../store/cache.ts';
import type { BatchOp, Space, Store } from '../store/store.ts';

export interface VersionRecord {
  version: string;
  /** blob id (64 hex) of the whole `.mpk` */
  blobId: string;
  /** bytes of the `.mpk` */
  size: number;
  source: string;
  /** the stored `Application.metadata` JSON text */
  metadata: string;
  /** service names of a multi-service bundle; empty for the single-service form */
  services: string[];
  /** each named service's wasm, stored as its own blob (admin-wire-a §3.3 step 5) */
  serviceBlobs: Record<string, string>;
  installedAt: number;
}

export interface AppRecord {
  id: string;
  package: string;
  signerId: string;
  /** the version the application row shows */
  current: string;
  versions: Record<string, VersionRecord>;
}

/** applications whose records are kept in memory at most */
const APPS_KEPT = 1_000;
const ALL = '';
/** the store space of the application records */
export const APPLICATIONS_SPACE = 'applications';

export class ApplicationStore {
  private readonly apps: Space<AppRecord>;
  private readonly records: KeyedCache<AppRecord | undefined>;
  /** every record, under one key that any write of the space changes */
  private readonly listing: KeyedCache<AppRecord[]>;

  constructor(store: Store) {
    this.apps = store.space<AppRecord>(APPLICATIONS_SPACE);
    this.records = new KeyedCache(store, { spaces: [APPLICATIONS_SPACE], keyOf: (op) => op.key, max: APPS_KEPT });
    this.listing = new KeyedCache(store, { spaces: [APPLICATIONS_SPACE], keyOf: () => ALL, max: 1 });
  }

  /** Records are frozen (shared by every reader): a change is a new record written with `put`. */
  get(id: string): Promise<AppRecord | undefined> {
    return this.records.get(id, async (k) => deepFreeze(await this.apps.get(k)));
  }

  /** `get` without waiting when the record is kept in memory ({value: undefined}: not installed); undefined when it must be read. */
  getNow(id: string): { value: AppRecord | undefined } | undefined {
    return this.records.peek(id);
  }

  put(record: AppRecord): Promise<void> {
    return this.apps.put(record.id, record);
  }

  /** Batch op of `put`, so the row can change in one batch with the blob references it holds. */
  putOp(record: AppRecord): BatchOp {
    return this.apps.putOp(record.id, record);
  }

  delOp(id: string): BatchOp {
    return this.apps.delOp(id);
  }

  delete(id: string): Promise<void> {
    return this.apps.del(id);
  }

  all(): Promise<AppRecord[]> {
    return this.listing.get(ALL, async () => {
      const out: AppRecord[] = [];
      for await (const [, r] of this.apps.entries()) out.push(r);
      return deepFreeze(out);
    });
  }
}

/** Every blob a version holds a reference on. */
export const blobsOf = (v: VersionRecord): string[] => [v.blobId, ...Object.values(v.serviceBlobs)];

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
