/**
 * Hearing of an `AbortSignal`'s abort with one DOM listener per signal (issue #33): the node's
 * calls share a signal per connection (contexts/rpc.ts), and each call listened on it while it ran
 * and again while it waited for a lock or a worker. `addEventListener` / `removeEventListener` on
 * Node's EventTarget were about 2 % of the main thread's time per JSON-RPC `get`; a Set per
 * signal costs a fraction of that.
 *
 * Same meaning as `signal.addEventListener('abort', fn, { once: true })` and its removal: `fn` runs
 * once when the signal aborts after `onAbort`, in the order of subscription, and never when it was
 * already aborted (its callers check `signal.aborted` first) or after it was unsubscribed.
 */

const watched = new WeakMap<AbortSignal, Set<() => void>>();

/** Runs `fn` once when `signal` aborts; answers the unsubscribe (idempotent). */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let subscribers = watched.get(signal);
  if (subscribers === undefined) {
    const made = new Set<() => void>();
    watched.set(signal, made);
    signal.addEventListener(
      'abort',
      () => {
        watched.delete(signal);
        // a copy: a subscriber may unsubscribe another (or itself) while they run
        for (const f of [...made]) if (made.delete(f)) f();
      },
      { once: true },
    );
    subscribers = made;
  }
  // a function object may be subscribed more than once: wrap it so each subscription is its own
  const own = subscribers.has(fn) ? () => fn() : fn;
  const set = subscribers;
  set.add(own);
  return () => {
    set.delete(own);
  };
}
