/**
 * Honest sync status (issue #13 item 5): per context, whether this node is caught up with what it
 * has heard of, how far behind it knows itself to be, which peers it last heard from and when, and
 * why it is behind. Held in memory (it describes this run of the node) and published as `SyncStatus`
 * frames on the event stream when the state changes (admin spec "Events" rule 3; domain.md §2.8:
 * `idle`, `waitingForPeers`, `syncing`, `receivingSnapshot`, `backingOff`).
 *
 * `behind` counts deltas this node knows exist and does not hold: ones received or announced whose
 * parents or keys are missing, and heads peers advertised that it lacks. A node cannot know of writes
 * no peer told it about, so "caught up" means caught up with every peer heard from.
 */
import type { EventBus } from '../bus.ts';
import type { BehindReason, SyncState, SyncStatusFields } from '../wire/sync.ts';

/** The status as the wire carries it (src/wire/sync.ts), with this node's reasons. */
export type ContextSyncStatus = SyncStatusFields<BehindReason>;

interface Entry {
  state: SyncState;
  pending: number;
  /** deltas whose merge failed for a transient reason, waiting for a retry */
  retrying: number;
  advertised: Set<string>;
  quarantined: number;
  /** held deltas dropped because their parents never arrived, since start */
  expired: number;
  reasons: Map<BehindReason, { detail: string; at: number }>;
  /** since when a condition derived at view time (no peers, not initialized) has held */
  derived: Map<BehindReason, number>;
  peers: Map<string, number>;
  lastSyncAt?: number;
  lastError?: string;
  failureCount: number;
}

const iso = (ms: number) => new Date(ms).toISOString();
const MAX_PEERS_SHOWN = 16;

export class SyncStatusBoard {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly bus: EventBus,
    private readonly now: () => number,
  ) {}

  private entry(contextId: string): Entry {
    let e = this.entries.get(contextId);
    if (!e) this.entries.set(contextId, (e = { state: 'idle', pending: 0, retrying: 0, advertised: new Set(), quarantined: 0, expired: 0, reasons: new Map(), derived: new Map(), peers: new Map(), failureCount: 0 }));
    return e;
  }

  heard(contextId: string, peer: string): void {
    this.entry(contextId).peers.set(peer, this.now());
  }

  /** Moves the context to a state; publishes `SyncStatus` when it changed (or always, with `announce`). */
  set(contextId: string, state: SyncState, announce = false): void {
    const e = this.entry(contextId);
    if (e.state === state && !announce) return;
    e.state = state;
    this.publish(contextId, e);
  }

  reason(contextId: string, reason: BehindReason, detail: string): void {
    this.entry(contextId).reasons.set(reason, { detail, at: this.now() });
  }

  clear(contextId: string, reason: BehindReason): void {
    this.entries.get(contextId)?.reasons.delete(reason);
  }

  failed(contextId: string, error: string): void {
    const e = this.entry(contextId);
    e.failureCount++;
    e.lastError = error;
  }

  succeeded(contextId: string): void {
    const e = this.entry(contextId);
    e.failureCount = 0;
    e.lastSyncAt = this.now();
    e.reasons.delete('pull_failed');
  }

  quarantine(contextId: string, reason: BehindReason, detail: string): void {
    const e = this.entry(contextId);
    e.quarantined++;
    e.reasons.set(reason, { detail, at: this.now() });
  }

  /** Held deltas dropped after their parents never came: no longer behind on them, and why. */
  expired(contextId: string, n: number, detail: string): void {
    const e = this.entry(contextId);
    e.expired += n;
    e.reasons.set('parents_expired', { detail: `${e.expired} held delta(s) dropped since start; the last ${n} ${detail}`, at: this.now() });
  }

  setPending(contextId: string, n: number): void {
    const e = this.entry(contextId);
    e.pending = n;
    if (n === 0) {
      e.reasons.delete('parents_pending');
      e.reasons.delete('key_unavailable');
    }
  }

  /** Deltas being retried after a transient merge failure: behind, and why. */
  setRetrying(contextId: string, n: number, detail?: string): void {
    const e = this.entry(contextId);
    e.retrying = n;
    if (n === 0) e.reasons.delete('apply_retrying');
    else if (detail !== undefined) e.reasons.set('apply_retrying', { detail, at: this.now() });
  }

  /** Heads a peer advertised that this node lacks (replaced at each heads message). */
  advertised(contextId: string, missing: string[]): void {
    this.entry(contextId).advertised = new Set(missing);
  }

  /** A delta this node knows of and does not hold yet (deferred until its context migrated). */
  known(contextId: string, id: string): void {
    this.entry(contextId).advertised.add(id);
  }

  /** A delta now held: no longer counted as advertised. */
  held(contextId: string, id: string): void {
    this.entries.get(contextId)?.advertised.delete(id);
  }

  forget(contextId: string): void {
    this.entries.delete(contextId);
  }

  /** `removed`: why this node is no longer a member of the context's group, when an admin removed it. */
  view(contextId: string, initialized: boolean, hasPeers: boolean, removed?: string): ContextSyncStatus {
    const e = this.entry(contextId);
    const reasons = new Map(e.reasons);
    const derive = (reason: BehindReason, holds: boolean, detail: string) => {
      if (!holds) return void e.derived.delete(reason);
      if (!e.derived.has(reason)) e.derived.set(reason, this.now());
      reasons.set(reason, { detail, at: e.derived.get(reason)! });
    };
    derive('not_initialized', !initialized, 'joined; the state has not been received yet');
    derive('no_peers', !hasPeers && removed === undefined, 'no connected peer holds this context');
    derive('removed', removed !== undefined, removed ?? '');
    const behind = e.pending + e.retrying + e.advertised.size;
    return {
      state: e.state === 'idle' && !hasPeers && (!initialized || behind > 0) ? 'waitingForPeers' : e.state,
      caughtUp: initialized && behind === 0 && removed === undefined && e.state !== 'syncing' && e.state !== 'receivingSnapshot',
      behind,
      pending: e.pending,
      quarantined: e.quarantined,
      reasons: [...reasons].map(([reason, r]) => ({ reason, detail: r.detail, at: iso(r.at) })),
      peers: [...e.peers]
        .sort(([, a], [, b]) => b - a)
        .slice(0, MAX_PEERS_SHOWN)
        .map(([peer, at]) => ({ peer, lastHeardAt: iso(at) })),
      lastSyncAt: e.lastSyncAt !== undefined ? iso(e.lastSyncAt) : null,
      lastError: e.lastError ?? null,
      failureCount: e.failureCount,
    };
  }

  private publish(contextId: string, e: Entry): void {
    this.bus.publish({
      type: 'context',
      contextId,
      kind: 'SyncStatus',
      data: { syncState: { state: e.state }, failureCount: e.failureCount, ...(e.lastError ? { lastError: e.lastError } : {}) },
    });
  }
}
