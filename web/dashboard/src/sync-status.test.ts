import { describe, expect, it } from 'vitest';
import type { ContextSyncStatus } from '../../../src/client/index.ts';
import { ago, applicationProblem, syncSummary } from './sync-status.ts';

const AT = '2026-01-01T00:00:00.000Z';
const base: ContextSyncStatus = { contextId: 'c'.repeat(64), state: 'idle', caughtUp: true, behind: 0, pending: 0, quarantined: 0, reasons: [], peers: [], lastSyncAt: null, lastError: null, failureCount: 0 };
const status = (over: Partial<ContextSyncStatus>): ContextSyncStatus => ({ ...base, ...over });
const because = (...reasons: string[]) => reasons.map((reason) => ({ reason, detail: reason, at: AT }));

describe('syncSummary', () => {
  it('says first that the application is being fetched, or missing with the fix (issue #34)', () => {
    const fetching = { reason: 'fetching_application', detail: 'fetching application ab… from the context’s peers', at: AT };
    expect(syncSummary(status({ caughtUp: false, reasons: [fetching, ...because('not_initialized')] }))).toMatchObject({ label: 'fetching its application', tone: 'warn' });
    const missing = { reason: 'application_unavailable', detail: 'application ab is not installed: …; install it on this node: hearth app install-dev <bundle.mpk>', at: AT };
    expect(syncSummary(status({ caughtUp: false, reasons: [missing] }))).toMatchObject({ label: 'application missing', tone: 'bad', explanation: missing.detail });
    expect(applicationProblem(status({ reasons: [missing] }))).toEqual(missing);
    expect(applicationProblem(base)).toBeUndefined();
  });

  it('says nothing for a context without a status (a node without a network)', () => {
    expect(syncSummary(undefined)).toBeUndefined();
  });

  it('caught up with peers is good; caught up with nobody to hear from says "no peers"', () => {
    expect(syncSummary(base)).toMatchObject({ label: 'caught up', tone: 'good' });
    expect(syncSummary(status({ reasons: because('no_peers') }))).toMatchObject({ label: 'no peers', tone: 'warn' });
  });

  it('caught up after a failed pull or with refused deltas is still caught up, with a warning', () => {
    expect(syncSummary(status({ state: 'backingOff', reasons: because('pull_failed') }))).toMatchObject({ label: 'caught up', tone: 'warn' });
    expect(syncSummary(status({ quarantined: 2, reasons: because('apply_failed') }))).toMatchObject({ label: 'caught up (2 refused)', tone: 'warn' });
  });

  it('behind counts what is known missing, and says when no peer can bring it', () => {
    expect(syncSummary(status({ caughtUp: false, behind: 3, pending: 1, reasons: because('parents_pending') }))).toMatchObject({ label: 'behind 3', tone: 'warn' });
    expect(syncSummary(status({ caughtUp: false, behind: 3, pending: 1 }))!.explanation).toContain('1 received');
    expect(syncSummary(status({ caughtUp: false, behind: 2, reasons: because('no_peers') }))!.label).toBe('behind 2, waiting for peers');
  });

  it('a node removed from the group says so before anything else', () => {
    const removed = syncSummary(status({ caughtUp: false, behind: 2, reasons: because('no_peers', 'removed') }))!;
    expect(removed).toMatchObject({ label: 'removed', tone: 'bad' });
    expect(removed.explanation).toContain('read-only');
  });

  it('names a pending upgrade before the count of what it holds back', () => {
    const waiting = syncSummary(status({ caughtUp: false, behind: 2, reasons: because('upgrade_pending') }))!;
    expect(waiting).toMatchObject({ label: 'waiting for its upgrade (behind 2)', tone: 'warn' });
    expect(waiting.explanation).toContain('migrated');
    expect(syncSummary(status({ caughtUp: false, reasons: because('upgrade_pending') }))!.label).toBe('waiting for its upgrade');
  });

  it('a node without the state: waiting for peers, receiving a snapshot, or a failed pull', () => {
    expect(syncSummary(status({ caughtUp: false, state: 'waitingForPeers', reasons: because('not_initialized', 'no_peers') }))).toMatchObject({ label: 'waiting for peers' });
    expect(syncSummary(status({ caughtUp: false, state: 'receivingSnapshot', reasons: because('not_initialized') }))).toMatchObject({ label: 'receiving a snapshot' });
    expect(syncSummary(status({ caughtUp: false, state: 'syncing' }))).toMatchObject({ label: 'syncing' });
    const failed = syncSummary(status({ caughtUp: false, state: 'backingOff', lastError: 'timeout', reasons: because('not_initialized', 'pull_failed') }))!;
    expect(failed).toMatchObject({ label: 'pull failed', tone: 'bad' });
    expect(failed.explanation).toContain('timeout');
    expect(syncSummary(status({ caughtUp: false, reasons: because('not_initialized') }))).toMatchObject({ label: 'not caught up' });
  });
});

describe('ago', () => {
  const now = Date.parse(AT);
  it('words a past time', () => {
    expect(ago(AT, now + 12_000)).toBe('12 s ago');
    expect(ago(AT, now + 3 * 60_000 + 5_000)).toBe('3 min ago');
    expect(ago(AT, now + 2 * 3_600_000)).toBe('2 h ago');
    expect(ago(AT, now + 4 * 86_400_000)).toBe('4 d ago');
  });
  it('never words a future time (clock skew) as negative, and keeps what it cannot read', () => {
    expect(ago(AT, now - 5_000)).toBe('0 s ago');
    expect(ago('not a time', now)).toBe('not a time');
  });
});
