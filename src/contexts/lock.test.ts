/** Per-context readers–writer locks: writes exclusive and FIFO, reads shared, a waiting writer holds back later reads. */
import { expect, it } from 'vitest';
import { ContextLocks, LockWaitAborted } from './lock.ts';

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

it('a waiter whose signal aborts leaves the queue: it never runs, and the readers behind a writer that left go in', async () => {
  const locks = new ContextLocks();
  const log: string[] = [];
  let open!: () => void;
  const held = locks.run('c', false, async () => (log.push('r1'), new Promise<void>((r) => (open = r))));
  const gone = new AbortController();
  const writer = locks.run('c', true, async () => log.push('w'), gone.signal).then(
    () => 'ran',
    (e: unknown) => e,
  );
  const reader = locks.run('c', false, async () => log.push('r2'));
  await tick();
  expect(log).toEqual(['r1']); // r2 waits behind the writer
  gone.abort();
  expect(await writer).toBeInstanceOf(LockWaitAborted);
  await reader;
  expect(log).toEqual(['r1', 'r2']);
  open();
  await held;
  // aborted before it asked: refused at once when it would wait, never when the lock is free
  const pre = new AbortController();
  pre.abort();
  expect(await locks.run('c', true, async () => 'free', pre.signal)).toBe('free');
  let close!: () => void;
  const busy = locks.run('c', true, () => new Promise<void>((r) => (close = r)));
  await expect(locks.run('c', true, async () => 'never', pre.signal)).rejects.toBeInstanceOf(LockWaitAborted);
  close();
  await busy;
  expect(log).toEqual(['r1', 'r2']);
});

it('runs a call on a free lock at once, before any microtask, and a waiting one only when its turn comes', async () => {
  const locks = new ContextLocks();
  const log: string[] = [];
  let open!: () => void;
  const writing = locks.run('c', true, () => (log.push('w'), new Promise<void>((r) => (open = r))));
  expect(log).toEqual(['w']); // taken synchronously
  const read = locks.run('c', false, async () => log.push('r'));
  await tick();
  expect(log).toEqual(['w']);
  open();
  await Promise.all([writing, read]);
  expect(log).toEqual(['w', 'r']);
  // a free lock again: a read and a read share it at once
  const both: string[] = [];
  const x = locks.run('c', false, () => (both.push('x'), new Promise<void>((r) => setTimeout(r, 5))));
  const y = locks.run('c', false, async () => both.push('y'));
  expect(both).toEqual(['x', 'y']);
  await Promise.all([x, y]);
});

it('releases the lock when the critical section throws before returning a promise', async () => {
  const locks = new ContextLocks();
  const bad = (() => {
    throw new Error('sync boom');
  }) as unknown as () => Promise<void>;
  await expect(locks.run('c', true, bad)).rejects.toThrow('sync boom');
  expect(await locks.run('c', true, async () => 'next')).toBe('next');
});
