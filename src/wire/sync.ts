/**
 * A context's honest sync status (domain.md §2.8; docs/sync.md): the shape hearth's status route
 * answers and the `SyncStatus` event frame carries. Imports nothing: see ./index.ts.
 */

export type SyncState = 'idle' | 'waitingForPeers' | 'syncing' | 'receivingSnapshot' | 'backingOff';

/** The status fields; `Reason` is the node's closed set of why-behind reasons (src/sync/status.ts), a string to the SDK. */
export interface SyncStatusFields<Reason extends string = string> {
  state: SyncState;
  /** nothing this node has heard of is missing */
  caughtUp: boolean;
  /** deltas known to exist that this node does not hold */
  behind: number;
  /** deltas held until their parents or key arrive */
  pending: number;
  /** deltas refused for good (bad seal, failed apply) */
  quarantined: number;
  reasons: { reason: Reason; detail: string; at: string }[];
  /** peers that sent deltas, heads or answers for this context, latest first */
  peers: { peer: string; lastHeardAt: string }[];
  lastSyncAt: string | null;
  lastError: string | null;
  failureCount: number;
}
