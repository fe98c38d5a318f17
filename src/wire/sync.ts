/**
 * A context's honest sync status (domain.md §2.8; docs/sync.md): the shape hearth's status route
 * answers and the `SyncStatus` event frame carries. Imports nothing: see ./index.ts.
 */

export type SyncState = 'idle' | 'waitingForPeers' | 'syncing' | 'receivingSnapshot' | 'backingOff';

/** Why a context is behind (a closed set; `detail` says more). */
export type BehindReason =
  /** no connected peer holds the context */
  | 'no_peers'
  /** deltas wait for parents not received yet */
  | 'parents_pending'
  /** held deltas were dropped: their parents never arrived, though asked for (issue #37 item 6) */
  | 'parents_expired'
  /** deltas wait for a group key this node cannot get */
  | 'key_unavailable'
  /** a delta's seal did not open, or its content did not match its id */
  | 'decrypt_failed'
  /** the application failed to apply a remote delta (quarantined) */
  | 'apply_failed'
  /** a remote delta failed to apply for a transient reason (deadline, overload): retried with back-off */
  | 'apply_retrying'
  /** joined, state not received yet */
  | 'not_initialized'
  /** the last pull from a peer failed */
  | 'pull_failed'
  /** the group moved to a version this node's copy has not migrated to: remote deltas wait for it */
  | 'upgrade_pending'
  /** an admin removed this node's account from the context's group: it neither syncs nor writes the context */
  | 'removed';

/** The status fields; `Reason` is the node's closed set of why-behind reasons (`BehindReason`), a string to the SDK. */
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
