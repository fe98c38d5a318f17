import { describe, expect, it } from 'vitest';
import { untilAborted } from '../abort.ts';
import { ABORTED, deadline, raceAbort } from './deadline.ts';

describe('network waits', () => {
  it('a deadline aborts its signal with a TimeoutError once the time has passed', async () => {
    const d = deadline(10);
    await new Promise((r) => setTimeout(r, 30));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('untilAborted passes the outcome through while the signal is live', async () => {
    const c = new AbortController();
    await expect(untilAborted(Promise.resolve(7), c.signal)).resolves.toBe(7);
    await expect(untilAborted(Promise.reject(new Error('boom')), c.signal)).rejects.toThrow('boom');
  });

  it('untilAborted rejects with the reason as soon as the signal aborts, and ignores a later failure', async () => {
    const c = new AbortController();
    let fail!: (e: Error) => void;
    const never = new Promise<number>((_, reject) => (fail = reject));
    const waiting = untilAborted(never, c.signal);
    c.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    fail(new Error('late')); // no unhandled rejection: the test run would report one
    await expect(untilAborted(Promise.resolve(1), c.signal)).rejects.toThrow('gone');
  });

  it('raceAbort answers ABORTED instead of rejecting, and passes other failures on', async () => {
    const c = new AbortController();
    const pending = raceAbort(new Promise<number>(() => undefined), c.signal);
    c.abort();
    await expect(pending).resolves.toBe(ABORTED);
    await expect(raceAbort(Promise.resolve('x'), new AbortController().signal)).resolves.toBe('x');
    await expect(raceAbort(Promise.reject(new Error('own')), new AbortController().signal)).rejects.toThrow('own');
  });
});
