/**
 * Keeps the node's store working or stops the node (issue #17 finding 1). LevelDB that hit an IO
 * error (e.g. no descriptor left for a new table file) refuses every write until it is reopened;
 * a node that kept answering its probes OK in that state lost writes silently. When the store
 * reports a failure, the supervisor logs it once with its cause (readiness is already 503 with the
 * reason, see `LevelStore.health`), then reopens the store with growing pauses. If it cannot within
 * its attempts, it gives up with a clear message (`onFatal`): the `run` command exits non-zero so a
 * supervisor (systemd, Kubernetes) restarts the process — except for a full disk, which a restart
 * does not mend: then it keeps trying until space is freed, and the node stays up answering 503.
 *
 * It is also the store's monitor (issue #14): every `probeIntervalMs` it runs the store's
 * read-write probe, so the probe routes answer from memory (`Store.status`) instead of touching the
 * store on every request; a failing operation shows there at once without waiting for a probe.
 */
import type { Logger } from 'pino';
import type { StoreHealth } from '../store/store.ts';

export interface ReopenableStore {
  onFailure(listener: (cause: string) => void): () => void;
  reopen(): Promise<void>;
  health(): Promise<StoreHealth>;
}

export interface StoreSupervisorOptions {
  store: ReopenableStore;
  logger: Logger;
  /** called once when the store cannot be reopened */
  onFatal: (message: string) => void;
  /** reopen attempts before giving up (default 8: about two minutes with the default pauses) */
  attempts?: number;
  /** pause before the first attempt; doubles up to `maxDelayMs` */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** how often the read-write probe runs while the store is ok (default 5 s) */
  probeIntervalMs?: number;
}

const PROBE_INTERVAL_MS = 5_000;
/** the longest pause between reopen attempts while the disk is full */
const FULL_DISK_MAX_DELAY_MS = 5_000;

export type SupervisorState = 'ok' | 'recovering' | 'failed';

export class StoreSupervisor {
  private state_: SupervisorState = 'ok';
  private unsubscribe?: () => void;
  private probe?: NodeJS.Timeout;
  private readonly abort = new AbortController();

  constructor(private readonly o: StoreSupervisorOptions) {}

  get state(): SupervisorState {
    return this.state_;
  }

  start(): void {
    this.unsubscribe = this.o.store.onFailure((cause) => void this.recover(cause));
    this.probe = setInterval(() => {
      if (this.state_ === 'ok') void this.o.store.health().catch(() => undefined);
    }, this.o.probeIntervalMs ?? PROBE_INTERVAL_MS);
    this.probe.unref();
  }

  stop(): void {
    this.unsubscribe?.();
    clearInterval(this.probe);
    this.abort.abort();
  }

  private async recover(cause: string): Promise<void> {
    if (this.state_ !== 'ok') return;
    this.state_ = 'recovering';
    const { logger } = this.o;
    logger.error({ cause }, 'store failed: the node is not ready until the store is reopened');
    const attempts = this.o.attempts ?? 8;
    let delay = this.o.firstDelayMs ?? 1_000;
    let last = cause;
    // a full disk is not mended by a restart: the node keeps trying (at the longest pause) and stays
    // up, answering 503, until space is freed (issue #37 item 1)
    for (let i = 1; i <= attempts || diskFull(last); i++) {
      if (!(await sleep(delay, this.abort.signal))) return;
      try {
        await this.o.store.reopen();
        const health = await this.o.store.health();
        if (!health.ok) throw new Error(health.reason);
        this.state_ = 'ok';
        logger.warn({ attempt: i }, 'store reopened: the node is ready again');
        return;
      } catch (err) {
        last = (err as Error).message ?? String(err);
        logger.warn({ attempt: i, of: attempts, cause: last }, 'store reopen failed');
      }
      // a full disk: tried again at most every few seconds, so the node is ready soon after space is freed
      delay = Math.min(delay * 2, diskFull(last) ? Math.min(FULL_DISK_MAX_DELAY_MS, this.o.maxDelayMs ?? FULL_DISK_MAX_DELAY_MS) : (this.o.maxDelayMs ?? 30_000));
    }
    this.state_ = 'failed';
    const message = `the store could not be reopened after ${attempts} attempts (last error: ${last}); stopping so a supervisor can restart the node`;
    logger.fatal({ cause: last }, message);
    this.o.onFatal(message);
  }
}

/** Whether a store error means the disk (or the user's disk quota) is full. */
export function diskFull(cause: string): boolean {
  return /No space left|ENOSPC|EDQUOT|Disk quota exceeded/i.test(cause);
}

/** Resolves true after `ms`, false when aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    timer.unref();
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
