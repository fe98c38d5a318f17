/**
 * A context's sync status in words (issue #13's honest sync status, shown by the contexts page):
 * one short label for the list, and the sentences behind each reason for the panel. The status is
 * the SDK's `ContextSyncStatus` from hearth's `GET /contexts/sync` (docs/sync.md "Honest sync
 * status"); a node without a network has none, and then there is nothing to say.
 */
import type { ContextSyncStatus } from '../../../src/client/index.ts';

export type Tone = 'good' | 'warn' | 'bad' | 'neutral';

export interface SyncSummary {
  /** a few words: "caught up", "behind 3", "waiting for peers", "no peers", "syncing" … */
  label: string;
  tone: Tone;
  /** one sentence saying what the label means for this context */
  explanation: string;
}

const has = (s: ContextSyncStatus, reason: string) => s.reasons.some((r) => r.reason === reason);

const STATE_WORDS: Record<ContextSyncStatus['state'], string> = {
  idle: 'idle',
  waitingForPeers: 'waiting for peers',
  syncing: 'syncing',
  receivingSnapshot: 'receiving a snapshot',
  backingOff: 'backing off after a failed pull',
};

export const stateWords = (state: string): string => STATE_WORDS[state as ContextSyncStatus['state']] ?? state;

/** The list's label for a status; undefined when the node reports none (no network). */
export function syncSummary(sync: ContextSyncStatus | undefined): SyncSummary | undefined {
  if (!sync) return undefined;
  const noPeers = has(sync, 'no_peers');
  const refused = sync.quarantined > 0 ? ` (${sync.quarantined} refused)` : '';
  // said before anything else: nothing about its sync matters much on a node removed from the group (docs/sync.md)
  if (has(sync, 'removed')) {
    return {
      label: 'removed',
      tone: 'bad',
      explanation: "An admin removed this node's account from the context's group: its copy is read-only, no longer syncs, and writes are refused. An invitation issued after the removal lets it back.",
    };
  }
  // the context cannot run here until its application is installed (docs/applications.md "Joining a context brings its application")
  const app = applicationProblem(sync);
  if (app) {
    return app.reason === 'fetching_application'
      ? { label: 'fetching its application', tone: 'warn', explanation: `${app.detail}.` }
      : { label: 'application missing', tone: 'bad', explanation: app.detail };
  }
  if (sync.caughtUp) {
    if (noPeers) {
      return { label: `no peers${refused}`, tone: 'warn', explanation: 'Caught up with everything this node has heard of, but no connected peer holds this context: writes made elsewhere cannot reach it until one connects.' };
    }
    // still caught up, but something went wrong on the way (a failed pull, a refused delta): the panel says what
    const troubled = sync.quarantined > 0 || sync.reasons.length > 0;
    return { label: `caught up${refused}`, tone: troubled ? 'warn' : 'good', explanation: 'Nothing any peer told this node about is missing here.' };
  }
  if (has(sync, 'upgrade_pending')) {
    // deltas made by a newer version wait until this node's copy migrated (docs/sync.md, `upgrade_pending`)
    return {
      label: `waiting for its upgrade${sync.behind > 0 ? ` (behind ${sync.behind})` : ''}`,
      tone: 'warn',
      explanation: "The context's group moved to a newer version of the application that this node's copy has not migrated to yet (see the group's upgrade status): remote writes wait until it has.",
    };
  }
  if (sync.behind > 0) {
    return {
      label: `behind ${sync.behind}${noPeers ? ', waiting for peers' : ''}`,
      tone: 'warn',
      explanation: `${sync.behind} delta(s) known to exist are not held here yet${sync.pending ? ` (${sync.pending} received, waiting for their parents or key)` : ''}.`,
    };
  }
  if (sync.state === 'syncing' || sync.state === 'receivingSnapshot') {
    return { label: stateWords(sync.state), tone: 'neutral', explanation: 'A pull from a peer is running.' };
  }
  if (noPeers) {
    return { label: 'waiting for peers', tone: 'warn', explanation: 'This node has no state of this context yet and no connected peer holds it.' };
  }
  if (sync.state === 'backingOff') {
    return { label: 'pull failed', tone: 'bad', explanation: `The last pull from a peer failed${sync.lastError ? `: ${sync.lastError}` : ''}.` };
  }
  return { label: 'not caught up', tone: 'warn', explanation: 'This node has no state of this context yet.' };
}

/** The context's application is missing here: being fetched from peers, or unavailable (the detail names the fix). */
export function applicationProblem(sync: ContextSyncStatus | undefined): { reason: string; detail: string } | undefined {
  return sync?.reasons.find((r) => r.reason === 'fetching_application' || r.reason === 'application_unavailable');
}

/** How long ago an ISO time was, in words ("12 s ago", "3 min ago", "2 h ago", "4 d ago"). */
export function ago(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (Number.isNaN(s)) return iso;
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}
