import { describe, expect, it } from 'vitest';
import { DirectUpgrades, UPGRADE_GRACE_MS, UPGRADE_WINDOW_MS } from './upgrades.ts';

function tracker() {
  let now = 1_000;
  const t = new DirectUpgrades(() => now);
  return { t, tick: (ms: number) => (now += ms), at: () => now };
}

describe('direct upgrades (DCUtR) read from connections', () => {
  it('a relayed connection opens an attempt; a direct one to the same peer succeeds it', () => {
    const { t, tick, at } = tracker();
    expect(t.list()).toEqual([]);
    t.relayedOpened('A', 'c1');
    expect(t.list()).toEqual([{ peerId: 'A', status: 'pending', reason: null, connectionId: 'c1', lastAttempt: at() }]);
    const started = at();
    tick(2_000);
    t.directOpened('A', 'c2');
    expect(t.list()).toEqual([{ peerId: 'A', status: 'succeeded', reason: null, connectionId: 'c2', lastAttempt: started }]);
    expect(t.counts()).toEqual({ attempts: 1, successes: 1 });
  });

  it('a direct connection with no open attempt is no upgrade; a second relayed one while pending is the same attempt', () => {
    const { t } = tracker();
    t.directOpened('B', 'c0');
    expect(t.list()).toEqual([]);
    t.relayedOpened('A', 'c1');
    t.relayedOpened('A', 'c2');
    expect(t.counts()).toEqual({ attempts: 1, successes: 0 });
    t.directOpened('B', 'c3'); // another peer
    expect(t.list()[0]).toMatchObject({ peerId: 'A', status: 'pending' });
    t.directOpened('A', 'c4');
    t.directOpened('A', 'c5'); // counted once
    expect(t.counts()).toEqual({ attempts: 1, successes: 1 });
  });

  it('a direct connection within the grace period after the relayed one closed is still the upgrade (the peer closed it first)', () => {
    const { t, tick } = tracker();
    t.relayedOpened('A', 'c1');
    t.relayedClosed('A');
    tick(UPGRADE_GRACE_MS - 1);
    expect(t.list()[0]).toMatchObject({ status: 'pending' });
    t.directOpened('A', 'c2');
    expect(t.list()[0]).toMatchObject({ status: 'succeeded', connectionId: 'c2' });
    expect(t.counts()).toEqual({ attempts: 1, successes: 1 });
    tick(UPGRADE_GRACE_MS * 2);
    expect(t.list()[0]).toMatchObject({ status: 'succeeded' }); // a success stays one
  });

  it('fails an attempt whose relayed connection closed with no direct one within the grace period, or with no direct connection within the window', () => {
    const { t, tick } = tracker();
    t.relayedOpened('A', 'c1');
    t.relayedClosed('A');
    tick(UPGRADE_GRACE_MS + 1);
    expect(t.list()[0]).toMatchObject({ status: 'failed', reason: 'the relayed connection closed and no direct one opened' });
    t.directOpened('A', 'c2'); // too late
    expect(t.counts()).toEqual({ attempts: 1, successes: 0 });
    t.relayedOpened('B', 'c3');
    tick(UPGRADE_WINDOW_MS - 1);
    expect(t.list().find((r) => r.peerId === 'B')!.status).toBe('pending');
    tick(2);
    expect(t.list().find((r) => r.peerId === 'B')).toMatchObject({ status: 'failed', reason: `no direct connection within ${UPGRADE_WINDOW_MS / 1000} s` });
    t.directOpened('B', 'c4');
    expect(t.counts()).toEqual({ attempts: 2, successes: 0 });
  });

  it('a relayed connection opened while a direct one is up is no attempt (nothing to upgrade), and leaves the row as it was', () => {
    const { t } = tracker();
    t.relayedOpened('A', 'c1');
    t.directOpened('A', 'c2');
    t.relayedOpened('A', 'c3', true);
    t.relayedClosed('A');
    expect(t.list()).toEqual([expect.objectContaining({ peerId: 'A', status: 'succeeded', connectionId: 'c2' })]);
    expect(t.counts()).toEqual({ attempts: 1, successes: 1 });
    t.relayedOpened('B', 'c4', true);
    expect(t.list().map((r) => r.peerId)).toEqual(['A']);
  });

  it('a new relayed connection after a finished attempt is a new attempt, one row per peer', () => {
    const { t } = tracker();
    t.relayedOpened('A', 'c1');
    t.directOpened('A', 'c2');
    t.relayedOpened('A', 'c3');
    expect(t.list()).toHaveLength(1);
    expect(t.list()[0]).toMatchObject({ status: 'pending', connectionId: 'c3' });
    expect(t.counts()).toEqual({ attempts: 2, successes: 1 });
  });

  it('keeps at most 256 rows, dropping the oldest', () => {
    const { t } = tracker();
    for (let i = 0; i < 300; i++) t.relayedOpened(`P${i}`, `c${i}`);
    const rows = t.list();
    expect(rows).toHaveLength(256);
    expect(rows[0]!.peerId).toBe('P44');
    expect(t.counts().attempts).toBe(300);
  });
});
