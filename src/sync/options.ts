/** Options of context state sync (service.ts) and their defaults. */
import type { PendingLimits } from './pending.ts';
import type { RetryPolicy } from './retries.ts';

export interface SyncOptions {
  /** heads heartbeat on every context topic (domain.md §2.7: 30 s at the reference) */
  heartbeatMs: number;
  /** deadline of one backfill or heads exchange */
  requestTimeoutMs: number;
  /** deadline of one snapshot transfer */
  snapshotTimeoutMs: number;
  /**
   * a node missing more deltas than this, with nothing the peer lacks, takes a snapshot instead of
   * replaying them one by one (catch-up after a long absence)
   */
  snapshotAbove: number;
  /** retries of a remote delta whose merge failed for a transient reason (retries.ts) */
  applyRetry?: Partial<RetryPolicy>;
  /** bounds of the deltas held for missing parents (pending.ts) */
  pending?: Partial<PendingLimits>;
}

export const SYNC_DEFAULTS: SyncOptions = { heartbeatMs: 10_000, requestTimeoutMs: 30_000, snapshotTimeoutMs: 120_000, snapshotAbove: 256 };


/** ids a backfill request names (the server takes at most 256) */
export const BACKFILL_FRONTIER = 64;

/** backfill exchanges one pull may chain, each resuming from the heads the last one left (a cut stream) */
export const MAX_BACKFILL_BATCHES = 64;
