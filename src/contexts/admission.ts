/**
 * Back-pressure on method calls (issue #23 §4): the calls a context has in the executor — waiting
 * for its lock, waiting for a worker, running or committing — are bounded per context and in all,
 * by count and by the bytes of their arguments. A call past a bound is refused at once with 503
 * and `Retry-After`, before it waits for anything or changes anything; a call admitted runs as
 * before. Without the bound, 1,000 writers on one context all queued on its write lock (median
 * 22 s) and 60 calls of 10 MiB held 1.5 GB.
 *
 * A call larger than a byte bound is admitted when nothing else is pending where that bound
 * applies, so a call the node accepts alone is never refused for its size (the body limit rules).
 */
import { unavailable } from '../errors.ts';
import { DEFAULT_ADMISSION as ADMISSION_DEFAULTS } from '../config/defaults.ts';

export interface AdmissionLimits {
  /** calls of one context pending at once */
  contextCalls: number;
  /** bytes of arguments of one context's pending calls */
  contextBytes: number;
  /** calls pending at once, all contexts together */
  totalCalls: number;
  /** bytes of arguments of all pending calls */
  totalBytes: number;
}

/** config `[runtime] context_pending_calls`, `context_pending_bytes`, `pending_calls`, `pending_bytes`: the configuration's defaults */
export const DEFAULT_ADMISSION: Readonly<AdmissionLimits> = ADMISSION_DEFAULTS;

/** What a refused caller is told to wait, in seconds: about a queue of short calls draining. */
export const PENDING_RETRY_AFTER_SECS = 2;

interface Pending {
  calls: number;
  bytes: number;
}

export class CallAdmission {
  private readonly limits: AdmissionLimits;
  private readonly byContext = new Map<string, Pending>();
  private readonly total: Pending = { calls: 0, bytes: 0 };
  /** request bodies being read (reserveBody) */
  private readonly bodies = { count: 0, bytes: 0 };
  /** calls refused since start (metrics) */
  refused = 0;

  constructor(limits: Partial<AdmissionLimits> = {}) {
    const l = { ...DEFAULT_ADMISSION, ...limits };
    // a bound of 0 (or less) would refuse every call: at least one is always admitted
    this.limits = { contextCalls: Math.max(1, l.contextCalls), contextBytes: Math.max(0, l.contextBytes), totalCalls: Math.max(1, l.totalCalls), totalBytes: Math.max(0, l.totalBytes) };
  }

  /** The bounds' state as metric series (`hearth_calls_pending`, `hearth_calls_refused_total`). */
  series(): Array<{ name: string; help: string; type: 'counter' | 'gauge'; read: () => Array<{ labels?: Record<string, string>; value: number }> }> {
    return [
      { name: 'hearth_calls_pending', help: 'Method calls pending (waiting for their context or a worker, or running), all contexts', type: 'gauge', read: () => [{ value: this.total.calls }] },
      { name: 'hearth_calls_pending_bytes', help: 'Argument bytes of the pending method calls', type: 'gauge', read: () => [{ value: this.total.bytes }] },
      { name: 'hearth_calls_refused_total', help: 'Method calls refused with 503 because a pending bound was reached', type: 'counter', read: () => [{ value: this.refused }] },
    ];
  }

  /**
   * Counts a request body of `bytes` (its `Content-Length`) that is about to be read toward the
   * node's byte bound, or throws 503 when that bound, with the pending calls' arguments and the
   * other bodies being read, would be passed (and something is pending). The route calls this
   * before the body is read, so a flood of large calls is refused before the node holds their
   * bodies (issue #23 §4: 60 calls of 10 MiB held 1.5 GB while they were parsed). Answers the
   * release, once the answer is sent or the connection closed.
   */
  reserveBody(bytes: number): () => void {
    const l = this.limits;
    const busy = this.total.calls + this.bodies.count > 0;
    if (busy && this.total.bytes + this.bodies.bytes + bytes > l.totalBytes) {
      this.refused++;
      const e = unavailable(
        `Too many calls waiting: the node holds ${this.total.bytes + this.bodies.bytes} bytes of call arguments and request bodies (the bound is ${l.totalBytes}); retry later`,
      );
      e.extra.retryAfterSecs = PENDING_RETRY_AFTER_SECS;
      throw e;
    }
    this.bodies.count++;
    this.bodies.bytes += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.bodies.count--;
      this.bodies.bytes -= bytes;
    };
  }

  /** calls and bytes pending now, in all or for one context */
  pending(contextId?: string): Readonly<Pending> {
    return contextId === undefined ? { ...this.total } : { ...(this.byContext.get(contextId) ?? { calls: 0, bytes: 0 }) };
  }

  /**
   * Counts a call of `bytes` argument bytes on `contextId` as pending, or throws 503 (`unavailable`
   * with `Retry-After`) when a bound would be passed. Answers the release, to call exactly once
   * when the call is done (a second call does nothing).
   */
  admit(contextId: string, bytes: number): () => void {
    const mine = this.byContext.get(contextId) ?? { calls: 0, bytes: 0 };
    const l = this.limits;
    const over =
      mine.calls >= l.contextCalls
        ? `context ${contextId} has ${mine.calls} calls pending (the bound is ${l.contextCalls})`
        : mine.calls > 0 && mine.bytes + bytes > l.contextBytes
          ? `context ${contextId} has ${mine.bytes} bytes of arguments pending (the bound is ${l.contextBytes})`
          : this.total.calls >= l.totalCalls
            ? `the node has ${this.total.calls} application calls pending (the bound is ${l.totalCalls})`
            : this.total.calls > 0 && this.total.bytes + bytes > l.totalBytes
              ? `the node has ${this.total.bytes} bytes of call arguments pending (the bound is ${l.totalBytes})`
              : undefined;
    if (over) {
      this.refused++;
      const e = unavailable(`Too many calls waiting: ${over}; retry later`);
      e.extra.retryAfterSecs = PENDING_RETRY_AFTER_SECS;
      throw e;
    }
    mine.calls++;
    mine.bytes += bytes;
    this.byContext.set(contextId, mine);
    this.total.calls++;
    this.total.bytes += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      mine.calls--;
      mine.bytes -= bytes;
      if (mine.calls === 0) this.byContext.delete(contextId);
      this.total.calls--;
      this.total.bytes -= bytes;
    };
  }
}
