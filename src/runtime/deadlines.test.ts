/** The runtime's deadlines under one timer: each fires once at its time, unless cancelled. */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Deadlines } from './deadlines.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** on the faked clock */
const clock = () => new Deadlines(() => Date.now());

it('fires each deadline at its time, in order, and not once cancelled', () => {
  const d = clock();
  const log: string[] = [];
  d.add(100, () => log.push('a'));
  const cancelB = d.add(150, () => log.push('b'));
  d.add(200, () => log.push('c'));
  d.add(50, () => log.push('early')); // earlier than the armed time: re-armed
  vi.advanceTimersByTime(60);
  expect(log).toEqual(['early']);
  cancelB();
  cancelB();
  vi.advanceTimersByTime(60);
  expect(log).toEqual(['early', 'a']);
  vi.advanceTimersByTime(100);
  expect(log).toEqual(['early', 'a', 'c']);
  expect(d.size).toBe(0);
});

it('holds no timer once every deadline is cancelled or fired', () => {
  const d = clock();
  const cancel = d.add(1_000, () => undefined);
  expect(vi.getTimerCount()).toBe(1);
  cancel();
  expect(vi.getTimerCount()).toBe(0);
  d.add(10, () => undefined);
  vi.advanceTimersByTime(10);
  expect(vi.getTimerCount()).toBe(0);
});

it('does not fire a due deadline that another one due at the same time cancelled', () => {
  const d = clock();
  const log: string[] = [];
  let cancelSecond: () => void = () => undefined;
  d.add(10, () => {
    log.push('first');
    cancelSecond();
    d.add(5, () => log.push('added while firing'));
  });
  cancelSecond = d.add(10, () => log.push('second'));
  vi.advanceTimersByTime(10);
  expect(log).toEqual(['first']);
  vi.advanceTimersByTime(5);
  expect(log).toEqual(['first', 'added while firing']);
});
