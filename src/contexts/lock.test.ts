/** Per-context readers–writer locks: writes exclusive and FIFO, reads shared, a waiting writer holds back later reads. */
import { expect, it } from 'vitest';
import { ContextLocks } from './lock.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));

it('runs writes one at a time in order, reads together, and lets a waiting writer go before later reads', async () => {
  const locks = new ContextLocks();
  const log: string[] = [];
  const gate = () => {
    let open!: () => void;
    const p = new Promise<void>((r) => (open = r));
    return { p, open };
  };
  const r1 = gate();
  const r2 = gate();
  const w1 = gate();
  const a = locks.run('c', false, async () => (log.push('r1'), r1.p));
  const b = locks.run('c', false, async () => (log.push('r2'), r2.p));
  const c = locks.run('c', true, async () => (log.push('w1'), w1.p));
  const d = locks.run('c', false, async () => log.push('r3'));
  const other = locks.run('other', true, async () => log.push('x'));
  await tick();
  expect(log).toEqual(['r1', 'r2', 'x']);
  r1.open();
  await tick();
  expect(log).toEqual(['r1', 'r2', 'x']); // the writer waits for every reader
  r2.open();
  await tick();
  expect(log).toEqual(['r1', 'r2', 'x', 'w1']); // r3 waits behind the writer
  w1.open();
  await Promise.all([a, b, c, d, other]);
  expect(log).toEqual(['r1', 'r2', 'x', 'w1', 'r3']);
});

it('releases the lock when the critical section throws', async () => {
  const locks = new ContextLocks();
  await expect(locks.run('c', true, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  expect(await locks.run('c', true, async () => 'next')).toBe('next');
});
