/**
 * FirstPulls: at most `max` contexts on their first pull, a slot freed by the context's `SyncStatus`
 * (idle, waitingForPeers) or its deadline, a pull that ended backing off re-synced after each retry
 * delay and then given up, frames of other contexts ignored, and stop() waking whoever waits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../bus.ts';
import { FirstPulls } from './first-pulls.ts';

const status = (bus: EventBus, contextId: string, state: string) => bus.publish({ type: 'context', contextId, kind: 'SyncStatus', data: { syncState: { state }, failureCount: 0 } });
const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

let pulls: FirstPulls | undefined;
afterEach(() => pulls?.stop());

function make(opts: { max?: number; deadlineMs?: number; retriesMs?: number[] } = {}) {
  const bus = new EventBus();
  const resynced: string[] = [];
  pulls = new FirstPulls({ bus, resync: async (id) => void resynced.push(id), ...opts });
  pulls.start();
  return { bus, resynced, pulls };
}

describe('FirstPulls', () => {
  it('holds at most max, and a settled status frees a slot', async () => {
    const { bus, pulls } = make({ max: 2 });
    pulls.hold('c1');
    pulls.hold('c2');
    let got = false;
    void pulls.slot().then(() => (got = true));
    await tick();
    expect(got).toBe(false);
    status(bus, 'c1', 'receivingSnapshot'); // still pulling
    status(bus, 'other', 'idle'); // not one of ours
    await tick();
    expect(got).toBe(false);
    status(bus, 'c1', 'idle');
    await tick();
    expect(got).toBe(true);
    expect(pulls.size).toBe(1);
    status(bus, 'c2', 'waitingForPeers');
    expect(pulls.size).toBe(0);
  });

  it('re-syncs a pull that ended backing off after each delay, then gives the slot back', async () => {
    const { bus, resynced, pulls } = make({ retriesMs: [5, 5] });
    pulls.hold('c1');
    status(bus, 'c1', 'backingOff');
    expect(resynced).toEqual([]);
    await tick(30);
    expect(resynced).toEqual(['c1']);
    status(bus, 'c1', 'backingOff');
    await tick(30);
    expect(resynced).toEqual(['c1', 'c1']);
    expect(pulls.size).toBe(1);
    status(bus, 'c1', 'backingOff'); // retries spent
    expect(pulls.size).toBe(0);
  });

  it('a success between retries cancels the pending re-sync', async () => {
    const { bus, resynced, pulls } = make({ retriesMs: [20] });
    pulls.hold('c1');
    status(bus, 'c1', 'backingOff');
    status(bus, 'c1', 'idle');
    await tick(50);
    expect(resynced).toEqual([]);
    expect(pulls.size).toBe(0);
  });

  it('a context whose status says nothing gives its slot back at the deadline', async () => {
    const { pulls } = make({ max: 1, deadlineMs: 20 });
    pulls.hold('silent');
    const start = Date.now();
    await pulls.slot();
    expect(Date.now() - start).toBeGreaterThanOrEqual(15);
    expect(pulls.size).toBe(0);
  });

  it('stop frees every slot and wakes a waiter', async () => {
    const { pulls } = make({ max: 1 });
    pulls.hold('c1');
    let got = false;
    void pulls.slot().then(() => (got = true));
    await tick();
    pulls.stop();
    await tick();
    expect(got).toBe(true);
    expect(pulls.size).toBe(0);
    pulls.hold('c2'); // stopped: takes nothing
    expect(pulls.size).toBe(0);
  });
});
