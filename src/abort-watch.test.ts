/** One DOM listener per signal, with the meaning of `addEventListener('abort', fn, { once: true })`. */
import { expect, it } from 'vitest';
import { onAbort } from './abort-watch.ts';

it('runs each subscriber once, in order, and not once unsubscribed', () => {
  const ac = new AbortController();
  const log: string[] = [];
  const fn = () => log.push('twice');
  onAbort(ac.signal, () => log.push('a'));
  const offB = onAbort(ac.signal, () => log.push('b'));
  onAbort(ac.signal, fn);
  const offFn = onAbort(ac.signal, fn); // the same function twice: two subscriptions
  onAbort(ac.signal, () => log.push('c'));
  offB();
  offB(); // idempotent
  offFn();
  ac.abort();
  ac.abort();
  expect(log).toEqual(['a', 'twice', 'c']);
});

it('adds one DOM listener per signal, however many subscribe', () => {
  const ac = new AbortController();
  let added = 0;
  const add = ac.signal.addEventListener.bind(ac.signal);
  ac.signal.addEventListener = ((...args: Parameters<typeof add>) => (added++, add(...args))) as typeof add;
  const offs = Array.from({ length: 50 }, () => onAbort(ac.signal, () => undefined));
  for (const off of offs) off();
  onAbort(ac.signal, () => undefined);
  expect(added).toBe(1);
});

it('lets a subscriber unsubscribe another while they run, and never runs one subscribed after the abort', () => {
  const ac = new AbortController();
  const log: string[] = [];
  let offLater: () => void = () => undefined;
  onAbort(ac.signal, () => {
    log.push('first');
    offLater();
  });
  offLater = onAbort(ac.signal, () => log.push('later'));
  ac.abort();
  onAbort(ac.signal, () => log.push('after'));
  expect(log).toEqual(['first']);
});
