/**
 * Two small timing tools the replication loops share (governance replication, context sync):
 * a repeating task with jitter that stops with a signal, and at most one run in flight per key.
 */

/**
 * Runs `task` every `periodMs` (±25 %, so nodes started together do not act in step), the next run
 * scheduled only after the previous one settled; stops when `signal` aborts. The timer never keeps
 * the process alive.
 */
export function every(periodMs: number, task: () => Promise<unknown>, signal: AbortSignal): void {
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    if (signal.aborted) return;
    timer = setTimeout(() => void task().catch(() => undefined).finally(next), periodMs * (0.75 + Math.random() / 2));
    timer.unref();
  };
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  next();
}

/** At most one run per key at a time: a call while one runs joins it. */
export class SingleFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, fn: () => Promise<T>): Promise<T> {
    const current = this.running.get(key);
    if (current) return current;
    const p = fn().finally(() => this.running.delete(key));
    this.running.set(key, p);
    return p;
  }

  /** Resolves when every run in flight has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running.values()]);
  }
}
