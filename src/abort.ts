/**
 * Waiting on a promise under an `AbortSignal`: shared by the node (network exchanges,
 * src/network/deadline.ts) and the SDK (a token refresh a call waits for, src/client/http.ts), so
 * it imports nothing and uses only what browsers have; the SDK package ships it
 * (scripts/build-client.ts).
 */

/**
 * `p`, or a rejection with the signal's reason as soon as `signal` aborts. `p` runs on: an
 * abandoned wait does not cancel work others may share (a refresh, a handler), and its later
 * failure is ignored.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  p.catch(() => undefined);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
