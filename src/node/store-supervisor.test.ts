import { describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import type { StoreHealth } from '../store/store.ts';
import { StoreSupervisor, type ReopenableStore } from './store-supervisor.ts';

/** A store whose reopen fails `failures` times, then works. */
class FlakyStore implements ReopenableStore {
  listener?: (cause: string) => void;
  reopens = 0;
  broken = true;
  constructor(
    private failures: number,
    private readonly cause = 'IO error: Too many open files',
  ) {}
  onFailure(l: (cause: string) => void) {
    this.listener = l;
    return () => (this.listener = undefined);
  }
  async reopen() {
    this.reopens++;
    if (this.failures-- > 0) throw new Error(this.cause);
    this.broken = false;
  }
  async health(): Promise<StoreHealth> {
    return this.broken ? { ok: false, reason: 'IO error' } : { ok: true };
  }
}

const quiet = pino({ level: 'silent' });
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
};

describe('store supervisor (issue #17 finding 1)', () => {
  it('reopens a failed store and goes back to ok', async () => {
    const store = new FlakyStore(2);
    const fatal: string[] = [];
    const s = new StoreSupervisor({ store, logger: quiet, onFatal: (m) => fatal.push(m), firstDelayMs: 1, maxDelayMs: 2 });
    s.start();
    store.listener!('IO error: Too many open files');
    expect(s.state).toBe('recovering');
    store.listener!('again'); // a second report while recovering starts nothing new
    await until(() => s.state === 'ok');
    expect(s.state).toBe('ok');
    expect(store.reopens).toBe(3);
    expect(fatal).toEqual([]);
    s.stop();
  });

  it('gives up after its attempts with a message naming the cause', async () => {
    const store = new FlakyStore(100);
    const fatal: string[] = [];
    const s = new StoreSupervisor({ store, logger: quiet, onFatal: (m) => fatal.push(m), attempts: 3, firstDelayMs: 1, maxDelayMs: 1 });
    s.start();
    store.listener!('IO error');
    await until(() => fatal.length > 0);
    expect(s.state).toBe('failed');
    expect(store.reopens).toBe(3);
    expect(fatal[0]).toMatch(/could not be reopened after 3 attempts.*Too many open files/);
  });

  it('never gives up while the disk is full: the node stays up until space is freed (issue #37 item 1)', async () => {
    const store = new FlakyStore(12, 'IO error: /home/data/000123.log: No space left on device');
    const fatal: string[] = [];
    const s = new StoreSupervisor({ store, logger: quiet, onFatal: (m) => fatal.push(m), attempts: 3, firstDelayMs: 1, maxDelayMs: 1 });
    s.start();
    store.listener!('IO error: No space left on device');
    await until(() => s.state === 'ok');
    expect(s.state).toBe('ok');
    expect(store.reopens).toBe(13);
    expect(fatal).toEqual([]);
    s.stop();
  });

  it('tries a store failed on a full disk again at most 5 s apart, so it is ready soon after space is freed (issue #37 item 1)', async () => {
    vi.useFakeTimers();
    try {
      const store = new FlakyStore(10, 'IO error: /home/data/000123.log: No space left on device');
      const at: number[] = [];
      const reopen = store.reopen.bind(store);
      store.reopen = async () => {
        at.push(Date.now());
        return reopen();
      };
      // the default pauses: 1 s doubling to 30 s for other errors
      const s = new StoreSupervisor({ store, logger: quiet, onFatal: () => undefined });
      s.start();
      const failed = Date.now();
      store.listener!('IO error: No space left on device');
      await vi.advanceTimersByTimeAsync(120_000);
      expect(s.state).toBe('ok');
      expect(store.reopens).toBe(11);
      const gaps = at.map((t, i) => t - (i === 0 ? failed : at[i - 1]!));
      expect(Math.max(...gaps)).toBeLessThanOrEqual(5_000);
      s.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('runs the read-write probe periodically while the store is ok, and not once stopped', async () => {
    const store = new FlakyStore(0);
    store.broken = false;
    let probes = 0;
    store.health = async () => (probes++, { ok: true });
    const s = new StoreSupervisor({ store, logger: quiet, onFatal: () => undefined, probeIntervalMs: 5 });
    s.start();
    await until(() => probes >= 3);
    expect(probes).toBeGreaterThanOrEqual(3);
    s.stop();
    const after = probes;
    await new Promise((r) => setTimeout(r, 30));
    expect(probes).toBe(after);
  });
});
