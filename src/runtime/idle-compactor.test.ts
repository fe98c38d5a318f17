/**
 * The idle compactor (idle-compactor.ts): its policy with a heap and an event loop the test sets,
 * then V8's own gc function obtained without a flag, and the young generation it gives back in a
 * child process (a real Node process: the figures are V8's, not a mock's).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { COMPACT_ROUNDS, IdleCompactor, obtainGc } from './idle-compactor.ts';

const MB = 1024 * 1024;

function harness() {
  const state = { used: 30 * MB, total: 45 * MB, utilization: 0, gcs: 0 };
  const c = new IdleCompactor({
    gc: () => {
      state.gcs++;
      state.used = 28 * MB; // the garbage goes
      if (state.gcs % COMPACT_ROUNDS === 0) state.total = 40 * MB; // the second shrinks the young generation
    },
    heap: () => ({ used: state.used, total: state.total }),
    utilization: () => state.utilization,
    growthBytes: 8 * MB,
  });
  return { c, state };
}

describe('IdleCompactor', () => {
  it('does nothing at idle while the heap has not grown', () => {
    const { c, state } = harness();
    for (let i = 0; i < 10; i++) expect(c.tick()).toBe(false);
    state.used += 7 * MB; // under the growth threshold
    expect(c.tick()).toBe(false);
    expect(state.gcs).toBe(0);
  });

  it('never collects while the thread is busy, then compacts once in two idle ticks after the load', () => {
    const { c, state } = harness();
    state.utilization = 0.9;
    state.used = 80 * MB;
    state.total = 94 * MB;
    for (let i = 0; i < 5; i++) expect(c.tick()).toBe(false);
    expect(state.gcs).toBe(0);
    state.utilization = 0.001;
    expect(c.tick()).toBe(true);
    expect(c.tick()).toBe(true);
    expect(state.gcs).toBe(COMPACT_ROUNDS);
    // idle from now on: no more collections
    for (let i = 0; i < 10; i++) expect(c.tick()).toBe(false);
    expect(c.collections).toBe(COMPACT_ROUNDS);
  });

  it('a compaction interrupted by work starts over when idle again', () => {
    const { c, state } = harness();
    state.used = 60 * MB;
    expect(c.tick()).toBe(true); // first round
    state.utilization = 0.5;
    state.used = 70 * MB;
    expect(c.tick()).toBe(false);
    state.utilization = 0;
    expect(c.tick()).toBe(true);
    expect(c.tick()).toBe(true);
    expect(c.tick()).toBe(false);
    expect(state.gcs).toBe(3);
  });

  it('collects again after the heap grows anew, by used or by total', () => {
    const { c, state } = harness();
    state.used = 50 * MB;
    c.tick();
    c.tick();
    expect(state.gcs).toBe(2);
    state.total += 9 * MB; // V8 grew the heap
    expect(c.tick()).toBe(true);
    c.tick();
    state.used += 9 * MB; // garbage accumulated at idle
    expect(c.tick()).toBe(true);
  });

  it('without a gc function it is unavailable and never ticks', () => {
    const c = new IdleCompactor({ gc: null, heap: () => ({ used: 100 * MB, total: 200 * MB }), utilization: () => 0 });
    expect(c.available).toBe(false);
    expect(c.tick()).toBe(false);
    c.start();
    c.stop();
  });

  it('obtains V8 gc without --expose-gc, and it frees garbage', async () => {
    const gc = obtainGc();
    expect(gc).toBeTypeOf('function');
    const weak = new WeakRef({ garbage: 'x'.repeat(100) });
    await new Promise((r) => setImmediate(r)); // a WeakRef's target is kept until the end of the job
    gc!();
    expect(weak.deref()).toBeUndefined();
  });

  it('in a real Node process after a load, the idle compaction gives back the young generation', () => {
    // run by the child: a load grows the young generation; then two idle ticks of 6 s
    const script = `
      import { IdleCompactor } from ${JSON.stringify(new URL('./idle-compactor.ts', import.meta.url).href)};
      import { getHeapSpaceStatistics } from 'node:v8';
      const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
      const c = new IdleCompactor({ tickMs: 6000 });
      let keep = 0;
      for (let r = 0; r < 20; r++) { const junk = []; for (let i = 0; i < 100000; i++) junk.push({ a: i, b: 'x' + i }); keep += junk.length; }
      const before = newSpace();
      c.start(); // the heap grew since the compactor was made: its two idle ticks compact
      await new Promise((r) => setTimeout(r, 13000));
      console.log(JSON.stringify({ before, after: newSpace(), collections: c.collections, keep }));
      c.stop();
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    const r = JSON.parse(out.trim().split('\n').pop()!) as { before: number; after: number; collections: number };
    expect(r.collections).toBe(COMPACT_ROUNDS);
    expect(r.before).toBeGreaterThan(8 * MB);
    expect(r.after).toBeLessThan(4 * MB);
  }, 40_000);
});
