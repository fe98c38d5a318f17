/**
 * Readying the contexts' modules at start, before the node says it is listening (issue #22: the
 * first `execute` after a restart < 20 ms). Each distinct module of this node's contexts is
 * compiled and loaded into a worker with its instance made (`ContextExecutor.prepare`, runtime.ts
 * `prepare`), one after the other, as many as the runtime keeps compiled.
 *
 * The start waits for this at most `budgetMs` (2 s by default): a node with many or large modules
 * still starts listening in bounded time, the preparation going on in the background, and the
 * calls that come first wait for what they need as they would without it. A module that fails to
 * prepare is skipped (its first call reports the failure); the others go on.
 */

export interface PrepareEntry {
  /** the module's identity: entries with the same key are prepared once */
  key: string;
  prepare: () => Promise<void>;
}

export interface PrepareOptions {
  /** distinct modules prepared at most (the runtime's compiled-module cache size) */
  limit: number;
  /** how long the caller waits at most (the rest goes on in the background) */
  budgetMs: number;
  /** stops the preparation (node stopping): no further module is started */
  signal?: AbortSignal;
  /** told of a module that failed to prepare (its key) */
  onError?: (key: string, err: unknown) => void;
}

export interface PrepareOutcome {
  /** distinct modules to prepare (at most `limit`) */
  total: number;
  /** prepared (successfully or not) when the wait ended */
  done: number;
  /** the budget ran out first */
  timedOut: boolean;
}

/** Default of {@link PrepareOptions.budgetMs}. */
export const PREPARE_BUDGET_MS = 2_000;

/**
 * Prepares `entries` in order, answering when all are done or `budgetMs` has passed (or `signal`
 * aborted), whichever comes first.
 */
export async function prepareModules(entries: PrepareEntry[], opts: PrepareOptions): Promise<PrepareOutcome> {
  const seen = new Set<string>();
  const todo = entries.filter((e) => (seen.has(e.key) ? false : (seen.add(e.key), true))).slice(0, Math.max(0, opts.limit));
  const outcome: PrepareOutcome = { total: todo.length, done: 0, timedOut: false };
  const all = (async () => {
    for (const entry of todo) {
      if (opts.signal?.aborted) return;
      try {
        await entry.prepare();
      } catch (err) {
        opts.onError?.(entry.key, err);
      }
      outcome.done++;
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopWaiting = new Promise<'budget' | 'aborted'>((resolve) => {
    timer = setTimeout(() => resolve('budget'), Math.max(0, opts.budgetMs));
    onAbort = () => resolve('aborted');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const first = await Promise.race([all.then(() => 'all' as const), stopWaiting]);
    // a snapshot: the preparation may go on after this answer
    return { ...outcome, timedOut: first === 'budget' };
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
  }
}
