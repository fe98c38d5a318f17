/**
 * Deadlines for network waits. `AbortSignal.timeout()` holds its signal weakly, and combined with
 * `AbortSignal.any()` it can be collected before it fires (nodejs/node#57736), which would leave a
 * stalled exchange waiting forever; here the timer holds its controller. `clear()` when the wait is
 * over, so thousands of finished exchanges leave no timers behind.
 */
import { untilAborted } from '../abort.ts';

export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

export function deadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`the ${ms} ms deadline passed`, 'TimeoutError')), ms);
  timer.unref(); // a deadline alone does not keep the process alive
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

export const ABORTED: unique symbol = Symbol('aborted');

/** `p`, or `ABORTED` as soon as `signal` aborts (`p` runs on; its failure is then ignored). */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  return untilAborted(p, signal).catch((e: unknown) => {
    if (signal.aborted && e === signal.reason) return ABORTED;
    throw e;
  });
}
