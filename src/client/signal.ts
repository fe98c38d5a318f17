/**
 * @module client/signal
 *
 * One cancellation handle per logical call: the caller's `AbortSignal` combined
 * with a deadline. The same handle covers the first attempt, any wait for a
 * token refresh, and the retry, so a retry never restarts the clock.
 * Implemented with `AbortController` and timers only (no `AbortSignal.any`),
 * so it runs on every Node 20 minor and in older browsers.
 */

export interface CallSignal {
  readonly signal: AbortSignal;
  /** True when the deadline (not the caller) aborted the call. */
  readonly timedOut: boolean;
  /** Stops the deadline timer but keeps the caller's signal linked (for streams). */
  stopTimer(): void;
  /** Stops the timer and unlinks the caller's signal. */
  dispose(): void;
}

/** Combines `timeoutMs` (0 or Infinity: none) with an optional caller signal. */
export function callSignal(timeoutMs: number, user?: AbortSignal): CallSignal {
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onUserAbort = () => controller.abort(user?.reason);

  if (user?.aborted) controller.abort(user.reason);
  else user?.addEventListener('abort', onUserAbort, { once: true });

  if (Number.isFinite(timeoutMs) && timeoutMs > 0 && !controller.signal.aborted) {
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    }, timeoutMs);
  }

  const stopTimer = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    stopTimer,
    dispose() {
      stopTimer();
      user?.removeEventListener('abort', onUserAbort);
    },
  };
}
