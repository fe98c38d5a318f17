/**
 * Persistence of installed applications: one JSON document per application id in the space
 * `applications`. An application (package + signer) keeps every version this node installed until
 * it is uninstalled; `current` names the one the row shows (the last installed, as the reference's
 * "latest fetched" pointer). Each version holds references on its blobs in the blob store.
 */
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

export class ApplicationStore {
  private readonly apps: Space<AppRecord>;

  constructor(store: Store) {
    this.apps = store.space<AppRecord>('applications');
  }

  get(id: string): Promise<AppRecord | undefined> {
    return this.apps.get(id);
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

  async all(): Promise<AppRecord[]> {
    const out: AppRecord[] = [];
    for await (const [, r] of this.apps.entries()) out.push(r);
    return out;
  }
}

/** Every blob a version holds a reference on. */
export const blobsOf = (v: VersionRecord): string[] => [v.blobId, ...Object.values(v.serviceBlobs)];
